import Facts
import Ingest
import Ledger

/// What a worker does with one record: decompress it (from the reprocess queue), parse, translate, key its facts
/// and compress its payload, so that the store thread only writes. One per worker thread (it owns zstd contexts).
struct RecordWork {
    let parser: RecordParser
    let translator: RecordTranslator
    let rulesVersion: Int64
    /// The run stamped on every record stored (``StoredRecord/run``).
    let run: String
    let compressor: PayloadCompressor
    let decompressor: PayloadDecompressor

    /// `dictionaries`: every dictionary of the ledger; new payloads are compressed with the last one.
    init(parser: RecordParser, translator: RecordTranslator, rulesVersion: Int64, run: String,
         dictionaries: [PayloadDictionary]) {
        self.parser = parser
        self.translator = translator
        self.rulesVersion = rulesVersion
        self.run = run
        compressor = PayloadCompressor(dictionary: dictionaries.last)
        decompressor = PayloadDecompressor(dictionaries: dictionaries)
    }

    /// The store's branch for a record as the reader handed it over (read from an archive, or queued).
    func outcome(of record: IngestBatchQueue.Record.Outcome) -> IngestBatchQueue.Record.Outcome {
        switch record {
        case .read(let raw):
            return outcome(of: raw, payload: nil)
        case .queued(let queued):
            guard let bytes = decompressor.bytes(of: queued.payload) else {
                return .damaged("the payload of the record at \(queued.provenance) does not decompress")
            }
            return outcome(of: RawRecord(bytes: bytes, provenance: queued.provenance), payload: queued.payload)
        case .quarantined, .stored, .damaged:
            return record
        }
    }

    /// Parses and translates `raw`; `payload` is its compressed form when the ledger has it already.
    private func outcome(of raw: RawRecord, payload: CompressedPayload?) -> IngestBatchQueue.Record.Outcome {
        let payload = payload ?? compressor.payload(raw.bytes)
        func quarantined(_ reason: QuarantineReason, _ detail: String) -> IngestBatchQueue.Record.Outcome {
            .quarantined(QuarantineEntry(reason: reason.rawValue, detail: detail, provenance: raw.provenance,
                                         payload: payload, rawSize: raw.bytes.count,
                                         key: QuarantineEntry.key(provenance: raw.provenance, rawBytes: raw.bytes),
                                         rulesVersion: rulesVersion))
        }
        let parsed: ParsedRecord
        switch parser.parse(raw) {
        case .success(let record): parsed = record
        case .failure(let rejection): return quarantined(rejection.reason, rejection.detail)
        }
        /// A stored record: `facts` are its facts (used) or markers (excluded); `subject` is the one subject they
        /// share, which makes the record count as a test purchase's once its token is marked.
        func stored(_ outcome: StoredRecord.Outcome, _ facts: [Fact],
                    parts: [QuarantinedPart] = []) -> IngestBatchQueue.Record.Outcome {
            let keyed = facts.map(KeyedFact.init)
            let subject = facts.first.map(\.subject).flatMap { first in facts.allSatisfy { $0.subject == first } ? first : nil }
            let record = StoredRecord(
                dedupKey: parsed.dedupKey, source: parsed.source, outcome: outcome, provenance: parsed.provenance,
                receivedAt: parsed.envelope.receivedAt, payload: payload, rulesVersion: rulesVersion,
                bucket: keyed.first?.bucket ?? LedgerBucket.of(platform: parsed.source.platform.rawValue, subject: parsed.dedupKey),
                subject: subject, flags: parsed.receivedAtInSeconds ? .receivedAtInSeconds : [],
                parts: parts.map { part in
                    QuarantineEntry(part: part, record: parsed.dedupKey, provenance: parsed.provenance,
                                    payload: compressor.payload(part.raw), rulesVersion: rulesVersion)
                },
                run: run)
            return .stored(record, keyed)
        }
        switch translator.translate(parsed) {
        case .used(let facts, let parts): return stored(.used, facts, parts: parts)
        case .excluded(let reason, let markers): return stored(.excluded(reason), markers)
        case .quarantined(let reason, let detail): return quarantined(reason, detail)
        }
    }
}

import Crypto
import Facts
import Ingest

extension SQLiteLedger {
    /// Everything ingested so far.
    ///
    /// - `files`: manifest rows; `read`: Σ of each file's latest read.
    /// - `used` / `excluded`: rows of `records` by outcome; `quarantined`: rows of `quarantine`.
    /// - `duplicate = read - used - excluded - quarantined`. This is exact because every stored row was created
    ///   by exactly one record read, and every other record read found its row already there, i.e. was a
    ///   duplicate. It holds as long as files only grow (archives are appended to or left alone): each row's
    ///   record is then still inside the latest read of some file. A file rewritten with records removed leaves
    ///   rows that no latest read counts, and duplicates are undercounted (never below 0: clamped).
    public func statistics() throws(LedgerError) -> IngestStatistics {
        var statistics = IngestStatistics()
        let totals = try prepared(LedgerSchema.fileTotals)
        if try totals.step() {
            statistics.files = Int(totals.int64(0))
            statistics.read = Int(totals.int64(1))
        }
        totals.reset()
        let outcomes = try prepared(LedgerSchema.recordsByOutcome)
        while try outcomes.step() {
            let count = Int(outcomes.int64(2))
            if outcomes.string(0) == "used" {
                statistics.used += count
            } else {
                statistics.excluded += count
                statistics.excludedByReason[outcomes.string(1), default: 0] += count
            }
        }
        outcomes.reset()
        let quarantine = try prepared(LedgerSchema.quarantineByReason)
        while try quarantine.step() {
            let count = Int(quarantine.int64(1))
            statistics.quarantined += count
            statistics.quarantinedByReason[quarantine.string(0), default: 0] += count
        }
        quarantine.reset()
        statistics.duplicate = max(0, statistics.read - statistics.used - statistics.excluded - statistics.quarantined)
        statistics.read = statistics.used + statistics.duplicate + statistics.excluded + statistics.quarantined
        let damaged = try prepared(LedgerSchema.damagedFiles)
        while try damaged.step() {
            statistics.damagedFiles.append(IngestStatistics.Damaged(
                file: damaged.string(0), offset: damaged.int64(1), reason: damaged.optionalString(2) ?? ""))
        }
        damaged.reset()
        let range = try prepared(LedgerSchema.eventRange)
        if try range.step() {
            statistics.firstEventAt = range.optionalInt64(0)
            statistics.lastEventAt = range.optionalInt64(1)
        }
        range.reset()
        return statistics
    }

    public func countsBySource() throws(LedgerError) -> [SourceCount] {
        let statement = try prepared(LedgerSchema.recordsBySource)
        defer { statement.reset() }
        var counts: [SourceCount] = []
        while try statement.step() {
            let source = statement.string(0)
            if counts.last?.source != source { counts.append(SourceCount(source: source, used: 0, excluded: 0)) }
            let count = Int(statement.int64(2))
            if statement.string(1) == "used" { counts[counts.count - 1].used += count } else { counts[counts.count - 1].excluded += count }
        }
        return counts
    }

    public func forEachQuarantined(reason: String?, _ body: (QuarantinedRecord) throws -> Void) throws {
        let decompressor = PayloadDecompressor(dictionaries: try payloadDictionaries())
        // A statement of its own: `body` may call back into the ledger.
        let statement = try connection.prepare(LedgerSchema.listQuarantine)
        try statement.bind(1, reason)
        try statement.bind(2, reason)
        while try statement.step() {
            let member = statement.string(3)
            let provenance = Provenance(file: statement.string(2), member: member.isEmpty ? nil : member,
                                        position: statement.int64(4))
            let stored = statement.blob(5)
            // No dictionary column: a row of the release before payloads were kept, its first 4096 bytes as read.
            let raw = try statement.optionalInt64(7).map { dictionary throws(LedgerError) -> [UInt8] in
                guard let bytes = decompressor.decompress(stored, dictionaryId: dictionary) else {
                    throw LedgerError(kind: .corrupt, path: path, message: "the quarantined record at \(provenance) does not decompress")
                }
                return bytes
            } ?? stored
            try body(QuarantinedRecord(reason: statement.string(0), detail: statement.string(1), provenance: provenance,
                                       raw: raw, rawSize: Int(statement.int64(6))))
        }
    }

    public func contentDigest() throws(LedgerError) -> String {
        enum Column { case text, integer, blob }
        var hasher = SHA256()
        var encoder = DigestEncoder()
        let tables: [(sql: String, columns: [Column])] = [
            (LedgerSchema.digestRecords, [.text, .text, .text, .text, .text, .text, .integer, .integer, .integer]),
            (LedgerSchema.digestFacts, [.blob, .integer, .text]),
            (LedgerSchema.digestQuarantine, [.text, .text, .text]),
        ]
        for (table, (sql, columns)) in tables.enumerated() {
            let statement = try connection.prepare(sql)
            encoder.reset()
            encoder.append(Int64(table))
            hasher.update(data: encoder.bytes)
            while try statement.step() {
                encoder.reset()
                for (column, kind) in zip(Int32(0)..., columns) {
                    switch kind {
                    case .text: encoder.append(statement.optionalString(column))
                    case .integer: encoder.append(statement.optionalInt64(column))
                    case .blob: encoder.append(bytes: statement.blob(column))
                    }
                }
                hasher.update(data: encoder.bytes)
            }
        }
        return hasher.finalize().hexString
    }
}

import Facts
import Ingest
import Ledger

/// A ledger opened for writing under its write lock (schema brought up to date), with its standing: what
/// `ingest` and `reprocess` share.
struct WriterSession {
    let store: any LedgerStore
    private(set) var lock: any LedgerLock
    let standing: LedgerStanding
    private let timeout: Duration

    /// Opens `location`, waits up to `timeout` for its write lock (`mode`), runs the quick check
    /// (``LedgerStore/quickCheck()``), and records the rules version in a
    /// ledger that holds nothing yet (so that its first records are never taken for stale ones).
    init(location: LedgerLocation, mode: LedgerLockMode, timeout: Duration) throws(IngestError) {
        self.timeout = timeout
        let store: any LedgerStore
        do throws(LedgerError) {
            store = try location.open(.readWrite)
        } catch {
            throw error.kind == .foreign || error.kind == .newerLedger ? .configuration(error) : .ledger(error)
        }
        do throws(LedgerError) {
            lock = try store.lockForWriting(mode, timeout: timeout)
        } catch {
            throw error.kind == .busy ? .busy(error)
                : error.kind == .foreign || error.kind == .newerLedger ? .configuration(error) : .ledger(error)
        }
        self.store = store
        standing = try IngestError.wrap { () throws(LedgerError) -> LedgerStanding in
            // A damaged ledger stops the run before anything is written into it.
            try store.quickCheck()
            var standing = try store.standing(rulesVersion: RulesVersion.current)
            if standing.isEmpty && standing.rulesVersion == nil && standing.reprocess == nil {
                try store.beginTransaction()
                try store.setRulesVersion(RulesVersion.current)
                try store.commitTransaction()
                standing.rulesVersion = RulesVersion.current
            }
            return standing
        }
    }

    /// Whether the ledger's facts must be rebuilt before anything is added or reported.
    var isStale: Bool { standing.isStale(for: RulesVersion.current) }

    /// Trades a shared write lock for an exclusive one (an ingest that must reprocess first), waiting for the
    /// other writers to finish.
    mutating func lockExclusively() throws(IngestError) {
        lock.release()
        do throws(LedgerError) {
            lock = try store.lockForWriting(.exclusive, timeout: timeout)
        } catch {
            throw error.kind == .busy ? .busy(error) : .ledger(error)
        }
    }

    /// The ledger's payload dictionaries, oldest first (payloads are written with the newest). One is trained on
    /// samples of what this run will write (`sampling`) and stored first when the ledger has none yet, or when the
    /// newest was trained on too little to fill it (a first run of a few records) and this run samples at least
    /// twice as much: each payload keeps the dictionary it was compressed with, and a poor first one made a ledger
    /// filled by later runs three times larger. Empty when there is too little to train on.
    func dictionaries(sampling files: [String], queue: (any ReprocessQueueReader)? = nil) throws(LedgerError) -> [PayloadDictionary] {
        let existing = try store.payloadDictionaries()
        if let newest = existing.last, newest.bytes.count >= PayloadDictionary.capacity / 2 { return existing }
        let samples = PayloadSampler(dictionaries: existing).samples(queue: queue, files: files)
        // A dictionary is a quarter of its samples' size (``PayloadDictionary/train(samples:id:)``).
        if let newest = existing.last, samples.reduce(0, { $0 + $1.count }) < 8 * newest.bytes.count { return existing }
        guard let trained = PayloadDictionary.train(samples: samples, id: 0) else { return existing }
        try store.beginTransaction()
        _ = try store.addPayloadDictionary(trained.bytes)
        try store.commitTransaction()
        // Another ingest sharing the ledger may have stored one meanwhile: payloads name theirs as well as ours.
        return try store.payloadDictionaries()
    }

    /// Rebuilds what `scope` covers from the payloads the ledger keeps (and reads again the manifest files that
    /// lack them), with `translator`, and ends the reprocess.
    func reprocess(_ scope: ReprocessScope, parser: RecordParser, translator: RecordTranslator,
                   progress: ProgressOutput, sampleFiles: [String] = []) throws(LedgerError) -> ReprocessOutcome {
        _ = try store.queueForReprocess(scope)
        let manifest = try store.filesToReread()
        let dictionaries = try dictionaries(sampling: manifest.map(\.path) + sampleFiles, queue: store.queueReader())
        var pipeline = RecordPipeline(parser: parser, translator: translator, rulesVersion: RulesVersion.current,
                                      dictionaries: dictionaries, progress: progress)
        pipeline.label = "reprocess"
        let tally = try pipeline.run([.queue(store.queueReader()), .manifestFiles(manifest)], into: store)
        try store.finishReprocess(rulesVersion: RulesVersion.current)
        return ReprocessOutcome(scope: scope, records: tally.queued, released: tally.released,
                                reread: tally.statistics,
                                unreadable: tally.unreadable.map { UnreadableFile(path: $0.path, reason: $0.reason) })
    }
}

import AppStore
import Facts
import Foundation
import Ingest
import Ledger
import PlayStore

/// Turns one parsed record into what it states: the translate stage between the readers and the ledger.
public struct RecordTranslator: Sendable {
    public var translate: @Sendable (ParsedRecord) -> Translation

    /// A translator from any function of a record; ``stores(apple:google:)`` is the one the CLI uses.
    public init(translate: @escaping @Sendable (ParsedRecord) -> Translation) {
        self.translate = translate
    }

    /// Both stores' translators, each record going to the store its source names.
    public static func stores(apple: AppStoreTranslator, google: PlayStoreTranslator) -> RecordTranslator {
        RecordTranslator { record in
            switch record.source.platform {
            case .apple: apple.translate(record)
            case .google: google.translate(record)
            }
        }
    }
}

/// `subledger ingest`: reads input files into the ledger, each record ending in exactly one place
/// (used, duplicate, excluded or quarantined).
///
/// Per file: fingerprint (size + streaming SHA-256); skip it when the ledger has it `done`; else mark it
/// `reading` and stream its records: a reader thread decompresses, splits and parses records into batches
/// of ``batchSize``, at most ``batchesInFlight`` batches ahead of the store thread (this one), which
/// translates and writes them. (Parsing sits on the reader side because it costs about as much as
/// translating and storing together: so the two cores share the work about evenly.) Transactions commit every ``commitEvery`` records; the file is marked `done`
/// in the same transaction as its last records. A killed run therefore leaves the file `reading` with a
/// committed prefix, and the next run reads it again: the prefix deduplicates, nothing is lost or doubled.
///
/// Only one ingest writes a ledger at a time (``IngestLock``); a second one waits up to ``lockTimeout``.
public struct IngestJob {
    public var ledgerPath: String
    public var translator: RecordTranslator
    public var progress: ProgressOutput
    /// How long to wait for another ingest on the same database before giving up.
    public var lockTimeout: Duration
    /// Records per transaction (bounded so a killed run loses little work and the WAL stays small).
    public var commitEvery = 20_000
    public var batchSize = 256
    public var batchesInFlight = 8

    /// A job writing into the ledger at `ledgerPath` (created when missing); `lockTimeout` is how long it waits
    /// for another ingest of the same database to finish before giving up with ``IngestError/busy``.
    public init(ledgerPath: String, translator: RecordTranslator, progress: ProgressOutput = .standardError,
                lockTimeout: Duration = .seconds(60)) {
        self.ledgerPath = ledgerPath
        self.translator = translator
        self.progress = progress
        self.lockTimeout = lockTimeout
    }

    /// Ingests `inputs` (files, folders, globs) and returns what this run did. Files skipped as unchanged
    /// count 0.
    public func run(inputs: [String]) throws(IngestError) -> IngestStatistics {
        var skipped: [String] = []
        return try run(inputs: inputs, skipped: &skipped)
    }

    /// As ``run(inputs:)``, also naming the files skipped because the ledger already has them unchanged.
    public func run(inputs: [String], skipped: inout [String]) throws(IngestError) -> IngestStatistics {
        let files: [String]
        do {
            files = try InputExpander.expand(inputs)
        } catch {
            throw .input(error.description)
        }
        let lock: IngestLock
        do {
            lock = try IngestLock(databasePath: ledgerPath, timeout: lockTimeout)
        } catch {
            throw error.kind == .busy ? .busy(error) : .ledger(error)
        }
        defer { lock.release() }
        do {
            let ledger = try SQLiteLedger(path: ledgerPath)
            var reporter = ProgressReporter(output: progress)
            reporter.filesTotal = files.count
            var statistics = IngestStatistics()
            for path in files {
                let fingerprint: FileFingerprint
                do {
                    fingerprint = try FileFingerprint.of(path: path)
                } catch {
                    // Listed a moment ago, unreadable now (permissions, removed): reported like a damaged file.
                    statistics.files += 1
                    statistics.damagedFiles.append(.init(file: path, offset: 0, reason: error.message))
                    reporter.filesDone += 1
                    continue
                }
                if try ledger.isDone(fingerprint) {
                    skipped.append(path)
                } else {
                    try ingest(fingerprint, into: ledger, statistics: &statistics, reporter: &reporter)
                    statistics.files += 1
                }
                reporter.filesDone += 1
                reporter.tick()
            }
            reporter.finish()
            return statistics
        } catch {
            throw .ledger(error)
        }
    }

    /// Reads one file into the ledger. On a ledger failure the open transaction is rolled back (the committed
    /// prefix stays, the file stays `reading`) and the reader thread is stopped before the error propagates.
    private func ingest(_ file: FileFingerprint, into ledger: SQLiteLedger, statistics: inout IngestStatistics,
                        reporter: inout ProgressReporter) throws(LedgerError) {
        let queue = IngestBatchQueue(capacity: batchesInFlight)
        startReader(path: file.path, queue: queue)
        var store = IngestRecordStore(ledger: ledger, translator: translator)
        var sinceCommit = 0
        do {
            try ledger.beginTransaction()
            try ledger.beginFile(file)
            while true {
                switch queue.pop() {
                case .batch(let records):
                    for record in records {
                        try store.add(record)
                        sinceCommit += 1
                        if sinceCommit >= commitEvery {
                            try ledger.saveProgress(path: file.path, read: store.counts.read)
                            try ledger.commitTransaction()
                            try ledger.beginTransaction()
                            sinceCommit = 0
                        }
                    }
                    reporter.records += records.count
                    reporter.bytes += records.reduce(0) { $0 + Int64($1.raw.bytes.count) }
                    reporter.tick()
                case .finished(let result):
                    let damage: [Damage]
                    switch result {
                    case .success(let found): damage = found
                    case .failure(let error): damage = [Damage(file: file.path, offset: 0, reason: "\(error)")]
                    }
                    try ledger.finishFile(file, counts: store.counts, damage: damage.first)
                    try ledger.commitTransaction()
                    store.add(to: &statistics)
                    statistics.damagedFiles += damage.map {
                        IngestStatistics.Damaged(file: $0.file, offset: $0.offset, reason: $0.reason)
                    }
                    return
                }
            }
        } catch {
            ledger.rollbackTransaction()
            queue.cancelAndDrain()
            throw error
        }
    }

    /// Starts the thread that decompresses, splits and parses `path` into batches of records.
    private func startReader(path: String, queue: IngestBatchQueue) {
        let batchSize = batchSize
        let thread = Thread {
            let parser = RecordParser()
            var batch: [IngestBatchQueue.Record] = []
            batch.reserveCapacity(batchSize)
            do {
                let damage = try ArchiveReader().read(path: path) { raw in
                    batch.append(IngestBatchQueue.Record(raw: raw, parsed: parser.parse(raw)))
                    if batch.count >= batchSize {
                        try queue.push(batch)
                        batch.removeAll(keepingCapacity: true)
                    }
                }
                if !batch.isEmpty { try queue.push(batch) }
                queue.finish(.success(damage))
            } catch {
                queue.finish(.failure(error))
            }
        }
        thread.name = "subledger-reader"
        thread.stackSize = 8 << 20
        thread.start()
    }
}

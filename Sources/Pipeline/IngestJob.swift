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
/// A reader, ``workers`` workers and the store, each handing bounded batches to the next (``IngestBatchQueue``,
/// at most ``batchesInFlight`` items of up to ``batchSize`` records per queue), so that every core stays busy
/// whatever the mix of records:
/// 1. the reader walks the files in input order: per file it takes the fingerprint (size + streaming SHA-256),
///    skips the file when the ledger had it `done` when the run started, else decompresses and splits it into
///    raw records, going on with the next file while the others still work on the last one;
/// 2. the workers parse records and turn them into facts, signature checks included (the parser and the
///    translators are `Sendable` and pure, so where they run changes nothing else). The reader deals its items
///    to the workers in turn, one queue each, and the store takes them back in the same turn, so the store sees
///    exactly the reader's order with no sequence numbers or reordering buffer;
/// 3. the store thread (this one) writes them: SQLite takes one writer, so this is the one stage that cannot be
///    spread, and everything else is kept off it.
/// The reader and store are each a fraction of the workers' load, so on two cores the four threads keep both
/// busy, where a fixed reader / translator / store split left the busiest of the three setting the pace.
///
/// Transactions commit every ``commitEvery`` records, across file boundaries (a commit per small archive
/// rewrote the same B-tree pages into the WAL thousands of times), and at the end of the run; a file is marked
/// `done` in the same transaction as its last records. A killed run therefore leaves each file either `done`
/// with all its records, `reading` with a committed prefix, or as it was before the run; the next run reads the
/// last two again: the prefix deduplicates, nothing is lost or doubled.
///
/// Only one ingest writes a ledger at a time (``IngestLock``); a second one waits up to ``lockTimeout``.
public struct IngestJob {
    public var ledgerPath: String
    public var translator: RecordTranslator
    public var progress: ProgressOutput
    /// How long to wait for another ingest on the same database before giving up.
    public var lockTimeout: Duration
    /// Records per transaction. Every commit appends each page it changed to the WAL, and inserts land all over
    /// the ledger's B-trees, so fewer commits write far less: 100,000 instead of 20,000 took a tenth off the
    /// bench ingest. Bounded so that a killed run redoes at most this much and the WAL stays around the size of
    /// the pages one transaction touches (SQLite spills them there once the page cache is full).
    public var commitEvery = 100_000
    /// Records per batch handed between threads. Small: a record on its way to a worker holds its raw bytes (up
    /// to tens of kB), so 256 let large archives hold about 100 MB in the queues.
    public var batchSize = 64
    /// Items a reader-to-worker queue holds before the reader waits. The worker-to-store queues hold six times
    /// as many: a translated record is small (keys and facts, no payload), and the slack lets the workers go on
    /// while the store commits.
    public var batchesInFlight = 6
    /// Threads that parse and translate: one per core (at least two, so that reading and writing overlap the
    /// work even on one core, at most eight, beyond which the single store thread sets the pace anyway). A value
    /// below 1 counts as 1.
    public var workers = min(max(ProcessInfo.processInfo.activeProcessorCount, 2), 8)

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
        var unchanged: [String] = []
        return try run(inputs: inputs.map(InputPath.init), unchanged: &unchanged)
    }

    /// As ``run(inputs:)``, also naming the files skipped because the ledger already has them unchanged.
    /// Files that are not inputs (``InputExpander``, ``ArchiveReader/recognise(_:)``) are in the statistics'
    /// `skippedFiles`, and the ledger keeps them for `status`.
    public func run(inputs: [InputPath], unchanged: inout [String]) throws(IngestError) -> IngestStatistics {
        let expansion: InputExpander.Expansion
        do {
            expansion = try InputExpander.expand(inputs)
        } catch {
            throw .input(error.description)
        }
        let files = expansion.files
        let lock: IngestLock
        do {
            lock = try IngestLock(databasePath: ledgerPath, timeout: lockTimeout)
        } catch {
            throw error.kind == .busy ? .busy(error) : .ledger(error)
        }
        defer { lock.release() }
        do throws(LedgerError) {
            let ledger = try SQLiteLedger(path: ledgerPath)
            try ledger.quickCheck()
            // The manifest as the run starts: only this run writes it now (the lock), and it reads each path once
            // (InputExpander lists a file once), so a file's state cannot change before the reader reaches it.
            let done = Set(try ledger.files().filter { $0.state == .done }.map(\.fingerprint))
            var statistics = IngestStatistics()
            for skipped in expansion.skipped {
                try ledger.skipFile(skipped)
                statistics.skippedFiles.append(skipped)
            }
            var reporter = ProgressReporter(output: progress)
            reporter.filesTotal = files.count
            let workers = max(workers, 1)
            let read = (0..<workers).map { _ in IngestBatchQueue(capacity: batchesInFlight) }
            let translated = (0..<workers).map { _ in IngestBatchQueue(capacity: 6 * batchesInFlight) }
            startReader(files: files, done: done, queues: read)
            for (input, output) in zip(read, translated) { startWorker(from: input, to: output) }
            var queue = TakeInTurn(queues: translated)
            var transaction = Transaction(ledger: ledger, commitEvery: commitEvery)
            do throws(LedgerError) {
                while true {
                    switch queue.pop() {
                    case .unreadable(let path, let message):
                        // Listed a moment ago, unreadable now (permissions, removed): reported like a damaged file.
                        statistics.files += 1
                        statistics.damagedFiles.append(.init(file: path, offset: 0, reason: message))
                        reporter.filesDone += 1
                    case .notAnInput(let skipped):
                        try ledger.skipFile(skipped)
                        statistics.skippedFiles.append(skipped)
                        reporter.filesDone += 1
                    case .unchanged(let file):
                        unchanged.append(file.path)
                        reporter.filesDone += 1
                        reporter.tick()
                    case .begin(let file):
                        try ingest(file, from: &queue, into: &transaction, statistics: &statistics, reporter: &reporter)
                        statistics.files += 1
                        reporter.filesDone += 1
                        reporter.tick()
                    case .batch, .end:
                        preconditionFailure("the reader sends a file's records between its begin and end")
                    case .finished:
                        try transaction.commit()
                        reporter.finish()
                        return statistics
                    }
                }
            } catch {
                // The open transaction is rolled back (committed files and prefixes stay) and the other threads
                // stopped before the error propagates.
                ledger.rollbackTransaction()
                queue.cancelAndWait()
                throw error
            }
        } catch {
            throw .ledger(error)
        }
    }

    /// Writes one file's records, from its `begin` (already taken from `queue`) to its `end`, into the ledger.
    private func ingest(_ file: FileFingerprint, from queue: inout TakeInTurn, into transaction: inout Transaction,
                        statistics: inout IngestStatistics, reporter: inout ProgressReporter) throws(LedgerError) {
        let ledger = transaction.ledger
        var store = IngestRecordStore(ledger: ledger)
        try transaction.open()
        try ledger.beginFile(file)
        while true {
            switch queue.pop() {
            case .batch(let records):
                for record in records {
                    try store.add(record)
                    try transaction.counted { () throws(LedgerError) in
                        try ledger.saveProgress(path: file.path, read: store.counts.read)
                    }
                }
                reporter.records += records.count
                reporter.bytes += records.reduce(0) { $0 + Int64($1.size) }
                reporter.tick()
            case .end(let result):
                let damage: [Damage]
                switch result {
                case .success(let found): damage = found
                case .failure(let error): damage = [Damage(file: file.path, offset: 0, reason: "\(error)")]
                }
                try ledger.finishFile(file, counts: store.counts, damage: damage.first)
                store.add(to: &statistics)
                statistics.damagedFiles += damage.map {
                    IngestStatistics.Damaged(file: $0.file, offset: $0.offset, reason: $0.reason)
                }
                return
            case .unreadable, .notAnInput, .unchanged, .begin, .finished:
                preconditionFailure("the reader ends a file before it sends anything else")
            }
        }
    }

    /// The run's open transaction: opened when a file is to be written, committed after every `commitEvery`
    /// records and at the end of the run.
    private struct Transaction {
        let ledger: SQLiteLedger
        let commitEvery: Int
        private var isOpen = false
        private var sinceCommit = 0

        init(ledger: SQLiteLedger, commitEvery: Int) {
            self.ledger = ledger
            self.commitEvery = commitEvery
        }

        mutating func open() throws(LedgerError) {
            guard !isOpen else { return }
            try ledger.beginTransaction()
            isOpen = true
        }

        /// Counts one record written; at the interval, runs `beforeCommit` (the current file's progress) and
        /// commits.
        mutating func counted(beforeCommit: () throws(LedgerError) -> Void) throws(LedgerError) {
            sinceCommit += 1
            guard sinceCommit >= commitEvery else { return }
            try beforeCommit()
            try commit()
            try open()
        }

        mutating func commit() throws(LedgerError) {
            sinceCommit = 0
            guard isOpen else { return }
            isOpen = false
            try ledger.commitTransaction()
        }
    }

    /// What a worker makes of one record: parsed, translated, and its facts keyed for the ledger.
    private static func outcome(of raw: RawRecord, parser: RecordParser,
                                translator: RecordTranslator) -> IngestBatchQueue.Record.Outcome {
        func quarantined(_ reason: QuarantineReason, _ detail: String) -> IngestBatchQueue.Record.Outcome {
            .quarantined(QuarantineEntry(reason: reason.rawValue, detail: detail, provenance: raw.provenance,
                                         rawBytes: raw.bytes))
        }
        let parsed: ParsedRecord
        switch parser.parse(raw) {
        case .success(let record): parsed = record
        case .failure(let rejection): return quarantined(rejection.reason, rejection.detail)
        }
        func stored(_ outcome: StoredRecord.Outcome) -> StoredRecord {
            StoredRecord(dedupKey: parsed.dedupKey, source: parsed.source, outcome: outcome,
                         provenance: parsed.provenance, receivedAt: parsed.envelope.receivedAt)
        }
        switch translator.translate(parsed) {
        case .used(let facts): return .stored(stored(.used), facts.map(KeyedFact.init))
        case .excluded(let reason): return .stored(stored(.excluded(reason)), [])
        case .quarantined(let reason, let detail): return quarantined(reason, detail)
        }
    }

    /// The workers' output queues read back in the turn the reader dealt its items in: item `k` is on queue
    /// `k % count`.
    private struct TakeInTurn {
        let queues: [IngestBatchQueue]
        private var next = 0

        init(queues: [IngestBatchQueue]) {
            self.queues = queues
        }

        mutating func pop() -> IngestBatchQueue.Item {
            guard let item = queues[next].pop() else {
                preconditionFailure("a worker stops early only when the store cancelled it")
            }
            next = (next + 1) % queues.count
            return item
        }

        /// On failure: stops every worker (and through them the reader) and waits until all are done.
        func cancelAndWait() {
            for queue in queues { queue.cancel() }
            for queue in queues { queue.waitForProducer() }
        }
    }

    /// Starts the thread that fingerprints, decompresses and splits `files` into queue items, in order, dealing
    /// them to `queues` in turn. `done`: the fingerprints the ledger had `done` when the run started.
    private func startReader(files: [InputPath], done: Set<FileFingerprint>, queues: [IngestBatchQueue]) {
        let batchSize = batchSize
        let thread = Thread {
            defer { for queue in queues { queue.producerDone() } }
            var next = 0
            func push(_ item: IngestBatchQueue.Item) throws(IngestBatchQueue.Cancelled) {
                try queues[next].push(item)
                next = (next + 1) % queues.count
            }
            var batch: [IngestBatchQueue.Record] = []
            batch.reserveCapacity(batchSize)
            let reader = ArchiveReader()
            do {
                for path in files {
                    switch reader.recognise(path) {
                    case .input:
                        break
                    case .notAnInput(let reason):
                        try push(.notAnInput(.init(file: path.description, reason: reason)))
                        continue
                    case .unreadable(let reason):
                        try push(.unreadable(path: path.description, message: reason))
                        continue
                    }
                    let fingerprint: FileFingerprint
                    do throws(LedgerError) {
                        fingerprint = try FileFingerprint.of(path)
                    } catch {
                        try push(.unreadable(path: path.description, message: error.message))
                        continue
                    }
                    if done.contains(fingerprint) {
                        try push(.unchanged(fingerprint))
                        continue
                    }
                    try push(.begin(fingerprint))
                    let result: Result<[Damage], any Error>
                    do {
                        let damage = try reader.read(path: path) { raw in
                            batch.append(IngestBatchQueue.Record(raw))
                            if batch.count >= batchSize {
                                try push(.batch(batch))
                                batch.removeAll(keepingCapacity: true)
                            }
                        }
                        if !batch.isEmpty {
                            try push(.batch(batch))
                            batch.removeAll(keepingCapacity: true)
                        }
                        result = .success(damage)
                    } catch let cancelled as IngestBatchQueue.Cancelled {
                        throw cancelled
                    } catch {
                        batch.removeAll(keepingCapacity: true)
                        result = .failure(error)
                    }
                    try push(.end(result))
                }
                try push(.finished)
            } catch {
                // Cancelled: the store side gave up and reports its own error.
            }
        }
        thread.name = "subledger-reader"
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// Starts a thread that parses and translates the records of `input`'s batches and passes every item on to
    /// `output`, until the reader is done. When the store side cancels `output`, it stops the reader in turn and
    /// waits for it before it ends.
    private func startWorker(from input: IngestBatchQueue, to output: IngestBatchQueue) {
        let translator = translator
        let thread = Thread {
            defer { output.producerDone() }
            let parser = RecordParser()
            do {
                while let item = input.pop() {
                    guard case .batch(var records) = item else {
                        try output.push(item)
                        continue
                    }
                    for index in records.indices {
                        guard case .read(let raw) = records[index].outcome else { continue }
                        records[index].outcome = Self.outcome(of: raw, parser: parser, translator: translator)
                    }
                    try output.push(.batch(records))
                }
            } catch {
                input.cancel()
                input.waitForProducer()
            }
        }
        thread.name = "subledger-worker"
        thread.stackSize = 8 << 20
        thread.start()
    }
}

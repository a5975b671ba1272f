import Facts
import Foundation
import Ingest
import Ledger

/// What the pipeline reads, in order: records kept on the ledger's reprocess queue, manifest files to read again,
/// and the archives a user named.
enum RecordSource: Sendable {
    /// The reprocess queue, in its reader's order.
    case queue(any ReprocessQueueReader)
    /// Manifest files read again from their recorded paths: read only if the bytes there are still the same.
    case manifestFiles([FileFingerprint])
    /// Files to ingest (each opened by its bytes, recorded by its text); `claimer` says which to read.
    case inputs([InputPath], claimer: any FileClaimer)
}

/// What one run of the pipeline did.
struct PipelineTally {
    /// The records read from files in this run, counted as `ingest --json` reports them.
    var statistics = IngestStatistics()
    /// Counts of the records taken from the reprocess queue.
    var queued = FileCounts()
    /// Queued records that had been quarantined and are now used, excluded or a duplicate.
    var released = 0
    /// Input files skipped as unchanged.
    var unchanged: [String] = []
    /// Input files not read because the same bytes were read under another path: (path, the other path).
    var copies: [(path: String, of: String)] = []
    /// Manifest files a reprocess could not read again: (path, why).
    var unreadable: [(path: String, reason: String)] = []
}

/// The record pipeline shared by `ingest` and `reprocess`: a reader, ``workers`` workers and the store, each
/// handing bounded batches to the next (``IngestBatchQueue``), so that every core stays busy whatever the mix of
/// records:
/// 1. the reader walks the sources in order: for a file, the fingerprint (size + streaming SHA-256) and the
///    ledger's claim (read, unchanged, a copy of another path), then decompression and splitting into raw
///    records; for the reprocess queue, pages of stored payloads;
/// 2. the workers parse records and turn them into facts, signature checks included (the parser and the
///    translators are `Sendable` and pure, so where they run changes nothing else), and compress payloads. The
///    reader deals its items to the workers in turn, one queue each, and the store takes them back in the same
///    turn, so the store sees exactly the reader's order with no sequence numbers or reordering buffer;
/// 3. the store thread (the caller's) writes them: the ledger takes one writer connection, so this is the one
///    stage that cannot be spread, and everything else is kept off it.
///
/// Transactions commit every ``LedgerStore/recordsPerTransaction`` records, across file boundaries (a commit per
/// small archive rewrote the same B-tree pages into SQLite's WAL thousands of times), and at the end of the run;
/// a file is marked `done` in the same transaction as its last records, and a queued record leaves the queue in
/// the transaction that writes its new outcome. The last records of a small file wait to be written with the next
/// files' (``FinishedFiles``): a write round per file was most of a small file's cost on PostgreSQL. A killed run therefore leaves each file either `done` with all its records,
/// `reading` with a committed prefix, or as it was before the run, and the queue holding exactly what is left to
/// do; the next run reads the rest: the prefix deduplicates, nothing is lost or doubled.
struct RecordPipeline {
    var parser: RecordParser
    var translator: RecordTranslator
    /// The rules version stamped on every record written (``RulesVersion/current``).
    var rulesVersion: Int64
    /// Every dictionary payloads may be compressed with; new payloads use the last (none when empty).
    var dictionaries: [PayloadDictionary]
    /// The ledger's quarantined tails (``LedgerStore/quarantinedTails()``): a record read that completes one
    /// replaces it (``CutLines``). Empty for a reprocess, which reads no file anew.
    var quarantinedTails: [QuarantinedTail] = []
    /// This run's identity, stamped on the records it stores (``LedgerStore/recordOutcomes(run:)`` counts them).
    let run = UUID().uuidString.lowercased()
    var progress: ProgressOutput
    /// What the progress line calls the run: `ingest` or `reprocess`.
    var label = "ingest"
    /// Records per write batch handed to the ledger (at most its ``LedgerStore/recordsPerTransaction``).
    var writeBatch = 1_024
    /// Bytes of payloads per write batch at most: a batch is written when it holds ``writeBatch`` records or
    /// this many bytes, whichever comes first (1,024 records of a few MB each held gigabytes).
    var writeBytes = 16 << 20
    /// Records per batch handed between threads. Small: a record on its way to a worker holds its raw bytes (up
    /// to tens of kB), so 256 let large archives hold about 100 MB in the queues.
    var batchSize = 64
    /// Bytes of records per batch handed between threads at most (a batch closes at ``batchSize`` records or at
    /// this size): records may be up to 16 MiB each, and every queue is bounded in bytes as well as in batches.
    var batchBytes = 1 << 20
    /// Items a reader-to-worker queue holds before the reader waits (and at most ``queueBytes`` of records). The
    /// worker-to-store queues hold six times as many (and as many bytes): a translated record is small (keys,
    /// facts and a compressed payload), and the slack lets the workers go on while the store commits.
    var batchesInFlight = 6
    /// Bytes of records a queue between threads holds at most (a queue holding nothing takes one batch of any
    /// size): with two workers and records of 16 MiB, the queues and the write batch stay under 256 MB together.
    var queueBytes = 4 << 20
    /// Threads that parse and translate: one per core (at least two, so that reading and writing overlap the
    /// work even on one core, at most eight, beyond which the single store thread sets the pace anyway).
    var workers = min(max(ProcessInfo.processInfo.activeProcessorCount, 2), 8)
    /// Queued records read per page at most (each page is one short read of the ledger); fewer when their payloads
    /// are large (``queueBytes`` a page, about).
    var queuePage = 4_096

    /// Runs `sources` through the stages into `ledger`, on this thread as the store.
    func run(_ sources: [RecordSource], into ledger: any LedgerStore) throws(LedgerError) -> PipelineTally {
        var reporter = ProgressReporter(output: progress, label: label)
        // The input files' sizes, for the share of bytes done (a file that cannot be stat'ed counts 0).
        var sizes: [String: Int64] = [:]
        for source in sources {
            switch source {
            case .queue: break
            case .manifestFiles(let files): for file in files { sizes[file.path] = file.size }
            case .inputs(let files, _): for path in files { sizes[path.description] = Self.size(of: path) }
            }
        }
        reporter.filesTotal = sources.reduce(0) { total, source in
            switch source {
            case .queue: total
            case .manifestFiles(let files): total + files.count
            case .inputs(let files, _): total + files.count
            }
        }
        reporter.bytesTotal = sizes.values.reduce(0, +)
        var tally = PipelineTally()
        let workers = max(workers, 1)
        let read = (0..<workers).map { _ in IngestBatchQueue(capacity: batchesInFlight, byteCapacity: queueBytes) }
        let translated = (0..<workers).map { _ in IngestBatchQueue(capacity: 6 * batchesInFlight, byteCapacity: queueBytes) }
        startReader(sources, queues: read)
        for (input, output) in zip(read, translated) { startWorker(from: input, to: output) }
        var queue = TakeInTurn(queues: translated)
        var transaction = Transaction(ledger: ledger)
        let limit = WriteLimit(records: max(1, min(writeBatch, ledger.recordsPerTransaction)), bytes: writeBytes)
        var queued = IngestRecordStore(ledger: ledger)
        var finished = FinishedFiles()
        do throws(LedgerError) {
            while true {
                switch queue.pop() {
                case .unreadable(let path, let message):
                    // Listed a moment ago, unreadable now (permissions, removed): reported like a damaged file.
                    tally.statistics.files += 1
                    tally.statistics.damagedFiles.append(.init(file: path, offset: 0, reason: message))
                    reporter.fileDone(size: sizes[path] ?? 0)
                case .notAnInput(let skipped):
                    try transaction.open()
                    try ledger.skipFile(skipped)
                    tally.statistics.skippedFiles.append(skipped)
                    reporter.fileDone(size: sizes[skipped.file] ?? 0)
                case .skipped(let file):
                    tally.unchanged.append(file.path)
                    reporter.fileDone(size: file.size)
                case .copy(let file, let original):
                    tally.copies.append((file.path, original))
                    reporter.fileDone(size: file.size)
                case .gone(let path, let reason):
                    try transaction.open()
                    try ledger.markUnreadable(path: path, reason: reason)
                    tally.unreadable.append((path, reason))
                    reporter.fileDone(size: sizes[path] ?? 0)
                case .begin(let file):
                    try ingest(file, from: &queue, into: &transaction, finished: &finished, limit: limit,
                               tally: &tally, reporter: &reporter)
                    tally.statistics.files += 1
                    reporter.fileDone(size: file.size)
                case .batch(let records):
                    try transaction.open()
                    try finished.finish(tally: &tally)
                    for record in records { try queued.add(record) }
                    if limit.isReached(records: queued.pendingCount, bytes: queued.pendingBytes) {
                        let count = queued.pendingCount
                        try queued.flush()
                        try transaction.written(count) {}
                    }
                    reporter.records += records.count
                case .failed(let error):
                    throw error
                case .end:
                    preconditionFailure("the reader ends only a file it began")
                case .idle:
                    try finished.finish(tally: &tally)
                    try queued.flush()
                    try transaction.commit()
                case .finished:
                    try finished.finish(tally: &tally)
                    try queued.flush()
                    try transaction.commit()
                    reporter.finish()
                    tally.queued = queued.counts
                    tally.released = queued.released
                    return tally
                }
                reporter.tick()
            }
        } catch {
            // The open transaction is rolled back (committed files and prefixes stay) and the other threads
            // stopped before the error propagates.
            ledger.rollbackTransaction()
            queue.cancelAndWait()
            reporter.abandon()
            throw error
        }
    }

    /// The size of the file at `path` in bytes (following symlinks); 0 when it cannot be stat'ed.
    private static func size(of path: InputPath) -> Int64 {
        var info = stat()
        return path.withCString { stat($0, &info) } == 0 ? Int64(info.st_size) : 0
    }

    /// Writes one file's records, from its `begin` (already taken from `queue`) to its `end`, into the ledger.
    /// Records of files read before it that wait in `finished` are written with this file's first batch, or, when
    /// the file is small, this file joins them.
    private func ingest(_ file: FileFingerprint, from queue: inout TakeInTurn, into transaction: inout Transaction,
                        finished: inout FinishedFiles, limit: WriteLimit, tally: inout PipelineTally,
                        reporter: inout ProgressReporter) throws(LedgerError) {
        let ledger = transaction.ledger
        var store = IngestRecordStore(ledger: ledger)
        try transaction.open()
        try ledger.beginFile(file)
        while true {
            switch queue.pop() {
            case .batch(let records):
                for record in records { try store.add(record) }
                if limit.isReached(records: store.pendingCount + finished.pendingCount,
                                   bytes: store.pendingBytes + finished.pendingBytes) {
                    let count = store.pendingCount + finished.pendingCount
                    try finished.finish(with: &store, tally: &tally)
                    try transaction.written(count) { () throws(LedgerError) in
                        try ledger.saveProgress(path: file.path, read: store.counts.read)
                    }
                }
                reporter.records += records.count
                reporter.tick()
            case .end(let result):
                let damage: [Damage]
                switch result {
                case .success(let found): damage = found
                case .failure(let error): damage = [Damage(file: file.path, offset: 0, reason: "\(error)")]
                }
                let count = store.pendingCount + finished.pendingCount
                let bytes = store.pendingBytes + finished.pendingBytes
                finished.files.append((file, store, damage))
                if limit.isReached(records: count, bytes: bytes) {
                    try finished.finish(tally: &tally)
                    try transaction.written(count) {}
                }
                return
            case .failed(let error):
                throw error
            case .unreadable, .notAnInput, .skipped, .copy, .gone, .begin, .idle, .finished:
                preconditionFailure("the reader ends a file before it sends anything else")
            }
        }
    }

    /// Files read to their end whose last records are not written yet: they are written together, in reading
    /// order, with the next batch that fills a write (or before the queue's records and at the end of the run),
    /// and each file is marked `done` right after, in the same transaction as its records, so a killed run never
    /// leaves a file `done` without them.
    private struct FinishedFiles {
        /// Each file with its store and the damage found in it (the first is the manifest's).
        var files: [(file: FileFingerprint, store: IngestRecordStore, damage: [Damage])] = []

        /// Records waiting to be written.
        var pendingCount: Int { files.reduce(0) { $0 + $1.store.pendingCount } }
        /// Their bytes (``IngestBatchQueue/Record/byteCount``).
        var pendingBytes: Int { files.reduce(0) { $0 + $1.store.pendingBytes } }

        /// Writes the waiting records and marks their files done.
        mutating func finish(tally: inout PipelineTally) throws(LedgerError) {
            guard !files.isEmpty else { return }
            var stores = files.map(\.store)
            try IngestRecordStore.flush(&stores)
            try markDone(stores, tally: &tally)
        }

        /// Writes the waiting records and then `current`'s (a file still being read) in one batch, and marks the
        /// waiting files done.
        mutating func finish(with current: inout IngestRecordStore, tally: inout PipelineTally) throws(LedgerError) {
            var stores = files.map(\.store) + [current]
            try IngestRecordStore.flush(&stores)
            current = stores.removeLast()
            try markDone(stores, tally: &tally)
        }

        /// The damage the ledger keeps for a file (one per file, where `status` finds it): the first, its reason
        /// naming the next ones with their offsets and counting the rest, so that none goes unsaid once the run's
        /// own output is gone, and a file of thousands of damaged members still has a reason of a few lines.
        static func kept(_ damages: [Damage]) -> Damage? {
            guard var first = damages.first else { return nil }
            let named = 5
            for other in damages.dropFirst().prefix(named) { first.reason += "; and at byte \(other.offset): \(other.reason)" }
            if damages.count > named + 1 { first.reason += "; and \(damages.count - named - 1) more (`subledger ingest` lists them all)" }
            return first
        }

        private mutating func markDone(_ stores: [IngestRecordStore], tally: inout PipelineTally) throws(LedgerError) {
            for (entry, store) in zip(files, stores) {
                try store.ledger.finishFile(entry.file, counts: store.counts, damage: Self.kept(entry.damage))
                store.add(to: &tally.statistics)
                tally.statistics.damagedFiles += entry.damage.map {
                    IngestStatistics.Damaged(file: $0.file, offset: $0.offset, reason: $0.reason)
                }
            }
            files.removeAll()
        }
    }

    /// The run's open transaction: opened when something is to be written, committed once it holds the ledger's
    /// ``LedgerStore/recordsPerTransaction`` records, and at the end of the run.
    private struct Transaction {
        let ledger: any LedgerStore
        private var isOpen = false
        private var sinceCommit = 0

        init(ledger: any LedgerStore) {
            self.ledger = ledger
        }

        mutating func open() throws(LedgerError) {
            guard !isOpen else { return }
            try ledger.beginTransaction()
            isOpen = true
        }

        /// Counts `count` records written; once the transaction is full, runs `beforeCommit` (the current file's
        /// progress) and commits.
        mutating func written(_ count: Int, beforeCommit: () throws(LedgerError) -> Void) throws(LedgerError) {
            sinceCommit += count
            guard sinceCommit >= ledger.recordsPerTransaction else { return }
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

    /// Starts the thread that turns `sources` into queue items, in order, dealing them to `queues` in turn.
    private func startReader(_ sources: [RecordSource], queues: [IngestBatchQueue]) {
        let batchSize = batchSize
        let batchBytes = batchBytes
        let cutLines = CutLines(quarantinedTails)
        let dictionaries = dictionaries
        let queuePage = queuePage
        let queueBytes = queueBytes
        let thread = Thread {
            defer { for queue in queues { queue.producerDone() } }
            var dealer = Dealer(queues: queues, batchSize: batchSize, batchBytes: batchBytes, cutLines: cutLines,
                                dictionaries: dictionaries)
            do {
                for source in sources {
                    switch source {
                    case .queue(let reader):
                        try dealer.readQueue(reader, pageSize: queuePage, pageBytes: queueBytes)
                    case .manifestFiles(let files):
                        for recorded in files {
                            guard let current = try? FileFingerprint.of(path: recorded.path) else {
                                try dealer.push(.gone(path: recorded.path, reason: "not found at reprocess: ingest it again"))
                                continue
                            }
                            guard current == recorded else {
                                try dealer.push(.gone(path: recorded.path, reason: "changed since it was read: ingest it again"))
                                continue
                            }
                            try dealer.readFile(current, at: InputPath(recorded.path))
                        }
                    case .inputs(let files, let claimer):
                        // Files another process is reading now are asked for again once the others are done,
                        // until they are done there or that process died and its claim expired.
                        var waiting = files
                        while !waiting.isEmpty {
                            var elsewhere: [InputPath] = []
                            for path in waiting {
                                switch dealer.reader.recognise(path) {
                                case .input:
                                    break
                                case .notAnInput(let reason):
                                    try dealer.push(.notAnInput(.init(file: path.description, reason: reason)))
                                    continue
                                case .unreadable(let reason):
                                    try dealer.push(.unreadable(path: path.description, message: reason))
                                    continue
                                }
                                let fingerprint: FileFingerprint
                                do throws(LedgerError) {
                                    fingerprint = try FileFingerprint.of(path)
                                } catch {
                                    try dealer.push(.unreadable(path: path.description, message: error.message))
                                    continue
                                }
                                switch claimer.claim(fingerprint) {
                                case .read: try dealer.readFile(fingerprint, at: path)
                                case .unchanged: try dealer.push(.skipped(fingerprint))
                                case .copy(let original): try dealer.push(.copy(fingerprint, of: original))
                                case .claimedElsewhere: elsewhere.append(path)
                                }
                            }
                            if !elsewhere.isEmpty {
                                try dealer.push(.idle)
                                try dealer.wait(seconds: 1)
                            }
                            waiting = elsewhere
                        }
                    }
                }
                try dealer.push(.finished)
            } catch let failure as LedgerError {
                // The reprocess queue could not be read: the store ends the run with this error.
                try? dealer.push(.failed(failure))
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
        let parser = parser
        let translator = translator
        let rulesVersion = rulesVersion
        let run = run
        let dictionaries = dictionaries
        let thread = Thread {
            defer { output.producerDone() }
            let work = RecordWork(parser: parser, translator: translator, rulesVersion: rulesVersion, run: run,
                                  dictionaries: dictionaries)
            do {
                while let item = input.pop() {
                    guard case .batch = item else {
                        try output.push(item)
                        continue
                    }
                    // Consumed, so that the batch's array is this thread's alone and its records are rewritten in
                    // place: bound from a live `item`, the first write copied every record of the batch.
                    guard case .batch(var records) = consume item else { continue }
                    for index in records.indices { records[index].outcome = work.outcome(of: records[index].outcome) }
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

/// When the store writes what it holds: at so many records or so many bytes of them, whichever comes first.
private struct WriteLimit {
    let records: Int
    let bytes: Int

    func isReached(records count: Int, bytes size: Int) -> Bool { count >= records || size >= bytes }
}

/// The reader thread's side of the hand-over: deals items to the workers' queues in turn and batches records.
private struct Dealer {
    let queues: [IngestBatchQueue]
    let batchSize: Int
    let batchBytes: Int
    let reader = ArchiveReader()
    /// The quarantined lines a file read now may complete, and what decompresses them.
    let cutLines: CutLines
    let decompressor: PayloadDecompressor
    private var next = 0
    private var batch: [IngestBatchQueue.Record] = []
    private var bytes = 0

    init(queues: [IngestBatchQueue], batchSize: Int, batchBytes: Int, cutLines: CutLines, dictionaries: [PayloadDictionary]) {
        self.queues = queues
        self.batchSize = batchSize
        self.batchBytes = batchBytes
        self.cutLines = cutLines
        decompressor = PayloadDecompressor(dictionaries: dictionaries)
        batch.reserveCapacity(batchSize)
    }

    mutating func push(_ item: IngestBatchQueue.Item) throws(IngestBatchQueue.Cancelled) {
        try queues[next].push(item)
        next = (next + 1) % queues.count
    }

    mutating func add(_ record: IngestBatchQueue.Record) throws(IngestBatchQueue.Cancelled) {
        bytes += record.byteCount
        batch.append(record)
        if batch.count >= batchSize || bytes >= batchBytes { try flush() }
    }

    mutating func flush() throws(IngestBatchQueue.Cancelled) {
        guard !batch.isEmpty else { return }
        try push(.batch(batch))
        batch.removeAll(keepingCapacity: true)
        bytes = 0
    }

    /// Decompresses and splits one file, found at `path`, into batches between its `begin` and `end`.
    mutating func readFile(_ file: FileFingerprint, at path: InputPath) throws {
        try push(.begin(file))
        let result: Result<[Damage], any Error>
        do {
            let completable = cutLines.completable(in: file, at: path, decompressor: decompressor)
            let damage = try reader.read(path: path) { raw in
                var record = IngestBatchQueue.Record(raw)
                if !completable.isEmpty { record.completes = CutLines.completed(by: raw, in: completable) }
                try add(record)
            }
            try flush()
            result = .success(damage)
        } catch let cancelled as IngestBatchQueue.Cancelled {
            throw cancelled
        } catch {
            batch.removeAll(keepingCapacity: true)
            bytes = 0
            result = .failure(error)
        }
        try push(.end(result))
    }

    /// Waits before asking again for files another process reads; gives up when the store side cancelled.
    func wait(seconds: Int) throws(IngestBatchQueue.Cancelled) {
        for queue in queues where queue.isCancelled { throw IngestBatchQueue.Cancelled() }
        sleep(UInt32(seconds))
    }

    /// Hands over the reprocess queue, page by page.
    /// Pages hold up to `pageSize` records and about `pageBytes` of payloads: the first page is one record, and
    /// each next one as large as the pages so far, averaged per record, allow (a page of 4,096 records of 12 MB
    /// each held gigabytes).
    mutating func readQueue(_ reader: any ReprocessQueueReader, pageSize: Int, pageBytes: Int) throws {
        var limit = 1
        var (records, bytes) = (0, 0)
        while true {
            let page = try reader.nextPage(limit: limit)
            for queued in page {
                bytes += queued.payload.bytes.count
                try add(IngestBatchQueue.Record(queued))
            }
            try flush()
            guard page.count == limit else { return }
            records += page.count
            limit = max(1, min(pageSize, pageBytes / max(1, bytes / records)))
        }
    }
}

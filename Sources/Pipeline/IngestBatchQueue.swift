import Facts
import Foundation
import Ingest
import Ledger

/// A hand-over between two of ingest's threads (reader → worker → store): a bounded FIFO of items. The producer
/// blocks when ``capacity`` items are in flight, so memory is bounded by `capacity × batch size` records per
/// queue whatever the files' sizes.
///
/// `@unchecked Sendable`: every stored property is guarded by `condition`.
final class IngestBatchQueue: @unchecked Sendable {
    /// A record on its way from the reader to the store.
    struct Record {
        /// Where a worker sent the record: the store's branches, with everything the store writes computed
        /// already (payload compressed, facts keyed). The parsed payload and the raw bytes are released on the
        /// worker thread: the store thread is the one stage that cannot be spread over cores, and a translated
        /// record is small, so the queues to the store can hold enough to ride out a commit.
        enum Outcome {
            /// As read from an archive, not yet parsed (between the reader and a worker).
            case read(RawRecord)
            /// As kept on the reprocess queue, not yet decompressed (between the reader and a worker).
            case queued(QueuedRecord)
            /// The parser rejected it, or the translator quarantined it.
            case quarantined(QuarantineEntry)
            /// A used record with the facts it states (keyed for the ledger), or an excluded one (no facts).
            case stored(StoredRecord, [KeyedFact])
            /// A queued payload that does not decompress: the ledger is damaged.
            case damaged(String)
        }

        var outcome: Outcome
        /// For a record from the reprocess queue: its place there, removed once its new outcome is written.
        let dequeue: QueuedRecord.ID?
        /// The quarantine key of an earlier read's cut line this record completes (``QuarantinedTail``), forgotten
        /// when the record is written.
        var completes: String?

        init(_ raw: RawRecord) {
            outcome = .read(raw)
            dequeue = nil
        }

        init(_ queued: QueuedRecord) {
            outcome = .queued(queued)
            dequeue = queued.id
        }

        /// The bytes the record holds, about: as read, or once translated its payload (compressed) and its facts
        /// (``factBytes`` each: a cumulative receipt states hundreds). What the queues and the store bound besides
        /// the count, since a record may be up to 16 MiB.
        var byteCount: Int {
            switch outcome {
            case .read(let raw): raw.bytes.count
            case .queued(let queued): queued.payload.bytes.count
            case .quarantined(let entry): entry.payload.bytes.count
            case .stored(let record, let facts):
                record.payload.bytes.count + record.parts.reduce(0) { $0 + $1.payload.bytes.count } + facts.count * Self.factBytes
            case .damaged: 0
            }
        }

        /// What one keyed fact holds in memory, about: the value, its key and its strings.
        static let factBytes = 256
    }

    /// What the reader says, in order. A file to read is `begin`, then any number of `batch`es, then `end`;
    /// records from the reprocess queue come as `batch`es outside any file.
    enum Item {
        /// The file could not be fingerprinted (unreadable, removed since it was listed).
        case unreadable(path: String, message: String)
        /// Not an input (neither JSON, gzip, tar nor zip): nothing read.
        case notAnInput(IngestStatistics.Skipped)
        /// The ledger has this version of the file `done`: nothing to read.
        case skipped(FileFingerprint)
        /// The same bytes were read under another path (named): not read again.
        case copy(FileFingerprint, of: String)
        /// A manifest file to read again (reprocess) is gone or changed: the ledger marks it, the run names it.
        case gone(path: String, reason: String)
        /// The reader starts on this file.
        case begin(FileFingerprint)
        case batch([Record])
        /// The file's last item: the damage found, or the error that stopped its reading.
        case end(Result<[Damage], any Error>)
        /// The reader waits for files other processes hold: the store writes what it holds and commits, so that
        /// no transaction keeps rows locked while this process waits for the others (they may wait for it).
        case idle
        /// The reader's last item: every source was handed over.
        case finished
        /// The reader's last item when the ledger failed it (the reprocess queue could not be read).
        case failed(LedgerError)
    }

    /// Thrown to a producer when the consumer gave up (its error is reported, not this one).
    struct Cancelled: Error {}

    /// Items the queue holds at most.
    let capacity: Int
    /// Bytes of records (``Record/byteCount``) the queue holds at most, beyond which a push waits; a queue holding
    /// nothing takes any one item, so a record larger than this still passes.
    let byteCapacity: Int
    private let condition = NSCondition()
    private var items: [(item: Item, bytes: Int)] = []
    private var bytes = 0
    private var cancelled = false
    private var producerFinished = false

    init(capacity: Int, byteCapacity: Int) {
        self.capacity = capacity
        self.byteCapacity = byteCapacity
    }

    /// Producer side: waits while the queue is full (in items or in bytes); throws ``Cancelled`` once the consumer
    /// cancelled.
    func push(_ item: Item) throws(Cancelled) {
        let size: Int
        if case .batch(let records) = item { size = records.reduce(0) { $0 + $1.byteCount } } else { size = 0 }
        condition.lock()
        defer { condition.unlock() }
        while (items.count >= capacity || (!items.isEmpty && bytes + size > byteCapacity)) && !cancelled { condition.wait() }
        if cancelled { throw Cancelled() }
        items.append((item, size))
        bytes += size
        condition.broadcast()
    }

    /// Producer side, always called exactly once, last: after its last item, or after being cancelled.
    func producerDone() {
        condition.lock()
        producerFinished = true
        condition.broadcast()
        condition.unlock()
    }

    /// Consumer side: the next item, waiting for the producer; `nil` once the producer is done and every item
    /// was taken.
    func pop() -> Item? {
        condition.lock()
        defer { condition.unlock() }
        while items.isEmpty && !producerFinished { condition.wait() }
        guard !items.isEmpty else { return nil }
        // At most `capacity` items: shifting the rest is cheaper than a ring buffer's bookkeeping.
        let (item, size) = items.removeFirst()
        bytes -= size
        condition.broadcast()
        return item
    }

    /// Consumer side, on failure: drops what is queued and makes the producer's next (or current) push throw.
    func cancel() {
        condition.lock()
        cancelled = true
        items.removeAll()
        bytes = 0
        condition.broadcast()
        condition.unlock()
    }

    /// Whether the consumer gave up.
    var isCancelled: Bool {
        condition.lock()
        defer { condition.unlock() }
        return cancelled
    }

    /// Consumer side, after ``cancel()``: waits until the producer's thread is done.
    func waitForProducer() {
        condition.lock()
        while !producerFinished { condition.wait() }
        condition.unlock()
    }
}

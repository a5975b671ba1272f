import Facts
import Foundation
import Ingest
import Ledger

/// A hand-over between two of ingest's threads (reader → translator → store): a bounded FIFO of items. The reader blocks when ``capacity`` items
/// are in flight, so memory is bounded by `capacity × batch size` records whatever the files' sizes.
///
/// One reader serves the whole run, not one per file: archives are small (tens of records each), so a reader
/// per file left the two threads taking turns instead of working at the same time.
///
/// `@unchecked Sendable`: every stored property is guarded by `condition`.
final class IngestBatchQueue: @unchecked Sendable {
    /// A record as read, with what the parser and the translator made of it (the raw bytes stay for the
    /// quarantine).
    struct Record {
        enum Outcome {
            /// The parser rejected it.
            case rejected(RecordRejection)
            /// Parsed, not yet translated (between the reader and the translator thread).
            case parsed(ParsedRecord)
            /// Parsed, and what it states. Only what the ledger keeps of the record goes on: its payload (JSON
            /// trees, decoded JWS) is released on the translator thread, not on the store thread, which is the
            /// busiest of the three.
            case translated(Identity, Translation)
        }

        /// What the `records` table keeps of a parsed record (``StoredRecord`` without its outcome).
        struct Identity {
            var dedupKey: String
            var source: SourceKind
            var provenance: Provenance
            /// The envelope's `received_at` (ms, UTC).
            var receivedAt: Millis?

            init(_ record: ParsedRecord) {
                dedupKey = record.dedupKey
                source = record.source
                provenance = record.provenance
                receivedAt = record.envelope.receivedAt
            }
        }

        var raw: RawRecord
        var outcome: Outcome
    }

    /// What the reader says about the files, in input order. A file to read is `begin`, then any number of
    /// `batch`es, then `end`.
    enum Item {
        /// The file could not be fingerprinted (unreadable, removed since it was listed).
        case unreadable(path: String, message: String)
        /// The ledger has this version of the file `done`: nothing to read.
        case skipped(FileFingerprint)
        /// The reader starts on this file.
        case begin(FileFingerprint)
        case batch([Record])
        /// The file's last item: the damage found, or the error that stopped its reading.
        case end(Result<[Damage], any Error>)
        /// The reader's last item: every file was handed over.
        case finished
    }

    /// Thrown to the reader when the store side gave up (its error is reported, not this one).
    struct Cancelled: Error {}

    let capacity: Int
    private let condition = NSCondition()
    private var items: [Item] = []
    private var cancelled = false
    private var producerFinished = false

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Reader side: waits while the queue is full; throws ``Cancelled`` once the store side cancelled.
    func push(_ item: Item) throws(Cancelled) {
        condition.lock()
        defer { condition.unlock() }
        while items.count >= capacity && !cancelled { condition.wait() }
        if cancelled { throw Cancelled() }
        items.append(item)
        condition.broadcast()
    }

    /// Reader side, always called exactly once, last: after ``Item/finished``, or after being cancelled.
    func producerDone() {
        condition.lock()
        producerFinished = true
        condition.broadcast()
        condition.unlock()
    }

    /// Store side: the next item, waiting for the reader.
    func pop() -> Item {
        condition.lock()
        defer { condition.unlock() }
        while items.isEmpty { condition.wait() }
        // At most `capacity` items: shifting the rest is cheaper than a ring buffer's bookkeeping.
        let item = items.removeFirst()
        condition.broadcast()
        return item
    }

    /// Store side, on failure: stops the reader and waits until its thread is done with the files.
    func cancelAndDrain() {
        condition.lock()
        cancelled = true
        items.removeAll()
        condition.broadcast()
        while !producerFinished { condition.wait() }
        condition.unlock()
    }
}

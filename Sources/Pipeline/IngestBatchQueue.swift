import Foundation
import Ingest

/// The hand-over between the reader thread (decompress, split and parse records) and the store thread
/// (translate, write): a bounded FIFO of record batches. The reader blocks when ``capacity`` batches are in
/// flight, so memory is bounded by `capacity × batch size` records whatever the file's size.
///
/// `@unchecked Sendable`: every stored property is guarded by `condition`.
final class IngestBatchQueue: @unchecked Sendable {
    /// A record as read, with what the parser made of it (the raw bytes stay for the quarantine).
    struct Record {
        var raw: RawRecord
        var parsed: Result<ParsedRecord, RecordRejection>
    }

    enum Item {
        case batch([Record])
        /// The reader's last item: the damage it found, or the error that stopped it.
        case finished(Result<[Damage], any Error>)
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
    func push(_ records: [Record]) throws(Cancelled) {
        condition.lock()
        defer { condition.unlock() }
        while items.count >= capacity && !cancelled { condition.wait() }
        if cancelled { throw Cancelled() }
        items.append(.batch(records))
        condition.broadcast()
    }

    /// Reader side, always called exactly once, last.
    func finish(_ result: Result<[Damage], any Error>) {
        condition.lock()
        items.append(.finished(result))
        producerFinished = true
        condition.broadcast()
        condition.unlock()
    }

    /// Store side: the next item, waiting for the reader.
    func pop() -> Item {
        condition.lock()
        defer { condition.unlock() }
        while items.isEmpty { condition.wait() }
        let item = items.removeFirst()
        condition.broadcast()
        return item
    }

    /// Store side, on failure: stops the reader and waits until its thread is done with the file.
    func cancelAndDrain() {
        condition.lock()
        cancelled = true
        items.removeAll()
        condition.broadcast()
        while !producerFinished { condition.wait() }
        condition.unlock()
    }
}

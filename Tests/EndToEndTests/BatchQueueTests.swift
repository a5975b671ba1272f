import Foundation
import Ingest
import Ledger
@testable import Pipeline
import Testing

/// The hand-over between the pipeline's threads is bounded in bytes as well as in batches: records may be up to
/// 16 MiB each, and a bound by count alone let an ingest of such records hold gigabytes.
@Suite struct BatchQueueTests {
    static func batch(bytes: Int) -> IngestBatchQueue.Item {
        .batch([IngestBatchQueue.Record(RawRecord(bytes: [UInt8](repeating: 0x20, count: bytes),
                                                  provenance: Provenance(file: "f", position: 1)))])
    }

    @Test func aPushWaitsWhileTheQueueHoldsItsBytesAndAnyBatchEntersAnEmptyQueue() throws {
        let queue = IngestBatchQueue(capacity: 10, byteCapacity: 100)
        try queue.push(Self.batch(bytes: 500))
        let pushed = DispatchSemaphore(value: 0)
        Thread {
            try? queue.push(Self.batch(bytes: 60))
            pushed.signal()
        }.start()
        // Full in bytes (500 of 100), though one batch of ten: the second push waits for a pop.
        #expect(pushed.wait(timeout: .now() + 0.3) == .timedOut)
        guard case .batch(let first)? = queue.pop() else { Issue.record("no batch"); return }
        #expect(first.first?.byteCount == 500)
        #expect(pushed.wait(timeout: .now() + 10) == .success)
        guard case .batch(let second)? = queue.pop() else { Issue.record("no batch"); return }
        #expect(second.first?.byteCount == 60)
    }

    /// The pipeline with bounds far below its records' sizes (one record per batch, per write and per page of the
    /// reprocess queue, one batch per queue) stores, and reprocesses to, exactly what the default bounds give.
    @Test func tinyByteBoundsChangeNothingStored() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("play.ndjson")
        try IngestFixtures.write(IngestFixtures.lines(0..<300), to: input)
        var digests: [String] = []
        for (name, bytes) in [("default", nil), ("tiny", 1)] as [(String, Int?)] {
            // Under its write lock, its schema brought up to date, as an ingest opens it.
            let session = try WriterSession(location: .sqlite(path: directory.file("\(name).sqlite")), mode: .shared,
                                            timeout: .seconds(5))
            defer { session.lock.release() }
            let store = session.store
            var pipeline = RecordPipeline(parser: RecordParser(times: IngestFixtures.times),
                                          translator: try IngestFixtures.translator(), rulesVersion: RulesVersion.current,
                                          dictionaries: [], progress: .none)
            if let bytes {
                pipeline.batchBytes = bytes
                pipeline.queueBytes = bytes
                pipeline.writeBytes = bytes
            }
            let tally = try pipeline.run([.inputs([InputPath(input)], claimer: try store.fileClaimer())], into: store)
            #expect(tally.statistics.read == 630)
            digests.append(try store.contentDigest())
            // A reprocess reads the queue in pages of about `queueBytes`: here one record a page.
            _ = try store.queueForReprocess(.full)
            let again = try pipeline.run([.queue(store.queueReader())], into: store)
            try store.finishReprocess(rulesVersion: RulesVersion.current)
            #expect(again.queued.read == 630)
            digests.append(try store.contentDigest())
        }
        #expect(Set(digests).count == 1)
    }
}

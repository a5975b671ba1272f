import Foundation
import Ingest
import Ledger

/// Picks the records a ledger's first payload dictionary is trained on: from the reprocess queue, and spread over
/// the run's files (up to ``maxFiles``, evenly spaced in the list, so that every kind of archive a backend writes
/// is seen), from each in proportion to its size, so that the samples are mixed like the records to be stored;
/// up to ``maxRecords`` records and ``maxBytes`` bytes. Reading a few records of a file twice costs far less than
/// what the dictionary saves. (Taking the same number from each file trained a dictionary that left the
/// payloads of a simulated set 1.8 times larger than one trained on records drawn at random.)
struct PayloadSampler {
    /// Dictionaries of the queued payloads (a ledger whose payloads were compressed without one has none).
    let dictionaries: [PayloadDictionary]
    /// Training takes about 0.5 s for 8 MB of samples (zstd's fastCover), once per ledger; on a simulated set of
    /// 419 MB of JSON, 16 MB of samples trained a dictionary 0.1% better in 0.8 s.
    var maxRecords = 4_000
    var maxBytes = 8 << 20
    var maxFiles = 100

    /// Sample records, as raw bytes. Unreadable files and payloads are passed over: a sample needs no error.
    func samples(queue: (any ReprocessQueueReader)?, files: [String]) -> [[UInt8]] {
        var samples: [[UInt8]] = []
        var bytes = 0
        if let queue, let page = try? queue.nextPage(limit: maxRecords / 2) {
            let decompressor = PayloadDecompressor(dictionaries: dictionaries)
            for queued in page {
                guard let record = decompressor.bytes(of: queued.payload) else { continue }
                samples.append(record)
                bytes += record.count
            }
        }
        let stride = max(1, files.count / maxFiles)
        let picked = Swift.stride(from: 0, to: files.count, by: stride).map { files[$0] }
        let sizes = picked.map { path in
            (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        }
        let total = max(1, sizes.reduce(0, +))
        let records = maxRecords - samples.count
        let budget = maxBytes - bytes
        struct Enough: Error {}
        for (path, size) in zip(picked, sizes) {
            // Each file's share of both budgets, so that the first files cannot use them up.
            let share = (records: max(1, records * size / total), bytes: max(1, budget * size / total))
            var taken = (records: 0, bytes: 0)
            _ = try? ArchiveReader().read(path: path) { raw in
                samples.append(raw.bytes)
                taken.records += 1
                taken.bytes += raw.bytes.count
                if taken.records >= share.records || taken.bytes >= share.bytes { throw Enough() }
            }
        }
        return samples
    }
}

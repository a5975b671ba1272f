import Ingest
import Ledger

/// Picks the records a ledger's first payload dictionary is trained on: spread over the run's files (up to
/// ``maxFiles``, evenly spaced in the list, so that every kind of archive a backend writes is seen), and from the
/// reprocess queue, up to ``maxRecords`` records and ``maxBytes`` bytes. Reading a few records of a file twice
/// costs far less than what the dictionary saves.
struct PayloadSampler {
    /// Dictionaries of the queued payloads (a ledger whose payloads were compressed without one has none).
    let dictionaries: [PayloadDictionary]
    var maxRecords = 4_000
    var maxBytes = 16 << 20
    var maxFiles = 100

    /// Sample records, as raw bytes. Unreadable files and payloads are passed over: a sample needs no error.
    func samples(queue: (any ReprocessQueueReader)?, files: [String]) -> [[UInt8]] {
        var samples: [[UInt8]] = []
        var bytes = 0
        func full() -> Bool { samples.count >= maxRecords || bytes >= maxBytes }
        if let queue, let page = try? queue.page(after: nil, limit: maxRecords / 2) {
            let decompressor = PayloadDecompressor(dictionaries: dictionaries)
            for queued in page {
                guard let record = decompressor.bytes(of: queued.payload) else { continue }
                samples.append(record)
                bytes += record.count
            }
        }
        let stride = max(1, files.count / maxFiles)
        let picked = Swift.stride(from: 0, to: files.count, by: stride).map { files[$0] }
        let perFile = max(1, (maxRecords - samples.count) / max(1, picked.count))
        struct Enough: Error {}
        for path in picked where !full() {
            var taken = 0
            _ = try? ArchiveReader().read(path: path) { raw in
                samples.append(raw.bytes)
                bytes += raw.bytes.count
                taken += 1
                if taken >= perFile || full() { throw Enough() }
            }
        }
        return samples
    }
}

import Foundation
import Testing
@testable import Ingest

/// Streaming: memory does not grow with the size of the input.
@Suite struct MemoryTests {
    /// Resident set size of this process in bytes (Linux `/proc/self/statm`), `nil` elsewhere.
    static func residentBytes() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    @Test func fiftyMegabytesOfGzippedNdjsonAreReadInBoundedMemory() throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/big.ndjson.gz"
        let writer = try GzipWriter(file: path)
        var generator = SystemRandomNumberGenerator()
        var written = 0
        var lines = 0
        while written < 50 * 1024 * 1024 {
            var batch = ""
            for _ in 0..<1000 {
                let token = String(generator.next() as UInt64, radix: 16) + String(generator.next() as UInt64, radix: 36)
                batch += #"{"received_at":"2024-03-01T12:00:00Z","source":"google.subscription.v1","purchase_token":"\#(token)","subscription_id":"premium_monthly","body":{"kind":"androidpublisher#subscriptionPurchase","startTimeMillis":"1709294400000","expiryTimeMillis":"1711972800000","orderId":"GPA.\#(token)..\#(lines)"}}"# + "\n"
                lines += 1
            }
            written += batch.utf8.count
            try writer.write(Array(batch.utf8))
        }
        _ = try writer.finish()

        let before = Self.residentBytes()
        var peak = before ?? 0
        var count = 0
        var bytes = 0
        let damages = try ArchiveReader().read(path: path) { record in
            count += 1
            bytes += record.bytes.count + 1
            if count % 20_000 == 0, let now = Self.residentBytes() { peak = max(peak, now) }
        }
        #expect(damages.isEmpty)
        #expect(count == lines)
        #expect(bytes == written)
        if let before {
            // The reader holds one 256 KiB read buffer, one 256 KiB inflate buffer and one record; 50 MB of
            // records read must not show up in the resident set.
            #expect(peak - before < 16 * 1024 * 1024, "resident set grew by \(peak - before) bytes")
        }
    }
}

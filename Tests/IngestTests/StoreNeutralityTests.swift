import Foundation
import Testing

/// Ingest knows containers, records and envelopes only: the stores' names, fields and shapes live in their own
/// modules (`AppStore`, `PlayStore`), which the record parser is given as `PayloadRecognizer`s.
@Suite struct StoreNeutralityTests {
    @Test func ingestNamesNoStore() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/Ingest")
        let files = try FileManager.default.contentsOfDirectory(atPath: sources.path).filter { $0.hasSuffix(".swift") }
        #expect(files.count > 10)
        for file in files {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8).lowercased()
            for store in ["apple", "google"] {
                #expect(!text.contains(store), "Sources/Ingest/\(file) names \(store)")
            }
        }
    }
}

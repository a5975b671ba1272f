import AppStore
import Facts
import Foundation
import Ingest

/// Instants written as the examples write them.
enum AppleDateForTests {
    /// ms UTC of a calendar instant.
    static func millis(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0) -> Millis {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute)
        return Millis((calendar.date(from: components) ?? .distantPast).timeIntervalSince1970 * 1000)
    }
}

/// `2024-01-17 10:00` → ms UTC.
func ms(_ text: String) -> Millis {
    let parts = text.split(whereSeparator: { $0 == "-" || $0 == " " || $0 == ":" }).compactMap { Int($0) }
    return AppleDateForTests.millis(year: parts[0], month: parts[1], day: parts[2],
                                    hour: parts.count > 3 ? parts[3] : 0, minute: parts.count > 4 ? parts[4] : 0)
}

func record(_ source: SourceKind, json: String, envelope: Envelope = Envelope()) throws -> ParsedRecord {
    ParsedRecord(provenance: Provenance(file: "test.ndjson", position: 1), source: source, envelope: envelope,
                 payload: .json(try JSONParser.parse(json)), dedupKey: "sha256:test")
}

func record(_ source: SourceKind, jws: String, envelope: Envelope = Envelope()) -> ParsedRecord {
    ParsedRecord(provenance: Provenance(file: "test.ndjson", position: 1), source: source, envelope: envelope,
                 payload: .jws(jws), dedupKey: "sha256:test")
}

extension Translation {
    var facts: [Fact] {
        if case .used(let facts) = self { return facts }
        return []
    }

    var quarantineReason: QuarantineReason? {
        if case .quarantined(let reason, _) = self { return reason }
        return nil
    }
}

extension Array where Element == Fact {
    func of(_ kind: Fact.Kind) -> [Fact] { filter { $0.kind == kind }.sorted { ($0.at, $0.ref ?? "") < ($1.at, $1.ref ?? "") } }
}

/// Reads a file of Apple's signed-data test vectors (`/work/shared/vectors/app-store-server-library`).
func vector(_ name: String) throws -> String {
    let path = "/work/shared/vectors/app-store-server-library/" + name
    return try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
}

func vectorRoot() throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: "/work/shared/vectors/app-store-server-library/testCA.der")))
}

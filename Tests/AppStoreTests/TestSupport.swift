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

/// The plausible times of a run whose clock reads 2026-01-01T00:00:00Z: fixed, so that tests never depend on today.
let testTimes = PlausibleTimes(now: 1_767_225_600_000)

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
        if case .used(let facts, _) = self { return facts }
        return []
    }

    /// The parts a used record set aside.
    var parts: [QuarantinedPart] {
        if case .used(_, let parts) = self { return parts }
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
/// The `shared` folder of the contract (`spec/`, `vectors/`, `certs/`), which lives beside the project's root:
/// `$SUBLEDGER_SHARED` when set, else `../shared` from the package root, else, for a clone of a local checkout
/// (`git clone . /tmp/check`), `../shared` beside the checkout it was cloned from.
func sharedPath(_ relative: String) -> String {
    let fileManager = FileManager.default
    if let explicit = ProcessInfo.processInfo.environment["SUBLEDGER_SHARED"] {
        return explicit + "/" + relative
    }
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    let beside = root.deletingLastPathComponent().appendingPathComponent("shared")
    if fileManager.fileExists(atPath: beside.path) { return beside.appendingPathComponent(relative).path }
    let config = (try? String(contentsOf: root.appendingPathComponent(".git/config"), encoding: .utf8)) ?? ""
    let origin = config.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        .first { $0.hasPrefix("url = /") }.map { URL(fileURLWithPath: String($0.dropFirst(6))).standardizedFileURL }
    let cloned = origin?.deletingLastPathComponent().appendingPathComponent("shared")
    return (cloned ?? beside).appendingPathComponent(relative).path
}

func vector(_ name: String) throws -> String {
    let path = sharedPath("vectors/app-store-server-library/" + name)
    return try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
}

func vectorRoot() throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: sharedPath("vectors/app-store-server-library/testCA.der"))))
}

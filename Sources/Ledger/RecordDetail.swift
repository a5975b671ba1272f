import Facts
import Ingest

/// One stored record as `status --record` shows it: where it came from, how it ended, its bytes and the facts
/// it states (provenance both ways: a fact names its record, a record lists its facts).
public struct RecordDetail: Sendable {
    public var dedupKey: String
    /// `SourceKind` raw value.
    public var source: String
    /// `used`, or `excluded` with ``reason``.
    public var outcome: String
    public var reason: String?
    /// The smallest place the record was read at.
    public var provenance: Provenance
    public var receivedAt: Millis?
    public var rulesVersion: Int64
    /// The record's bytes as read (`nil` for a record a release before payloads were kept stored).
    public var raw: [UInt8]?
    /// The facts whose smallest stating record this is.
    public var facts: [Fact]
}

/// A fact with the record that stated it first (earliest `observed_at`, then smallest dedup key).
public struct AttributedFact: Sendable {
    public var fact: Fact
    /// Dedup key of the record; `nil` for a fact made before facts named their records.
    public var record: String?
}

extension Provenance {
    /// A place as ``description`` writes it (`FILE:POSITION`, `FILE[MEMBER]:POSITION`); `nil` for anything
    /// else (such as a dedup key: `sha256:…`, `msg:…`, `uuid:…`, whose tail is not a number).
    init?(reference: String) {
        guard let colon = reference.lastIndex(of: ":"), let position = Int64(reference[reference.index(after: colon)...]) else {
            return nil
        }
        let place = reference[..<colon]
        if place.hasSuffix("]"), let open = place.lastIndex(of: "[") {
            self.init(file: String(place[..<open]), member: String(place[place.index(after: open)..<place.index(before: place.endIndex)]),
                      position: position)
        } else {
            self.init(file: String(place), position: position)
        }
    }
}

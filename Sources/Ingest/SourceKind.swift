import Facts

/// The payload type of a record: the envelope's `source` name (`inputs.md`), `<platform>.<kind>`.
///
/// Ingest owns no names: each store module declares its kinds as constants of this type and recognises them
/// (``PayloadRecognizer``); the platform is the name's first segment, so a kind always belongs to one store.
public struct SourceKind: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The name, as envelopes and the ledger write it.
    public let rawValue: String
    /// The store whose payloads these are: the name's first segment.
    public let platform: Platform

    /// The kind named `rawValue`; `nil` unless it is `<platform>.<kind>` with a known platform and a non-empty kind.
    public init?(rawValue: String) {
        guard let dot = rawValue.firstIndex(of: "."), rawValue.index(after: dot) < rawValue.endIndex,
              let platform = Platform(rawValue: String(rawValue[..<dot]))
        else { return nil }
        self.rawValue = rawValue
        self.platform = platform
    }

    /// A kind of `platform`'s, named `<platform>.<name>`.
    public init(_ platform: Platform, _ name: String) {
        self.rawValue = platform.rawValue + "." + name
        self.platform = platform
    }

    public var description: String { rawValue }
}

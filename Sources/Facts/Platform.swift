/// The store a subscription was sold through.
public enum Platform: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    /// App Store (in-app purchase, IAP).
    case apple
    /// Google Play (in-app billing, IAB).
    case google

    public static func < (lhs: Platform, rhs: Platform) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Milliseconds since 1970-01-01T00:00:00Z. Every instant in the pipeline is one of these: UTC, no leap seconds,
/// the unit both stores use on the wire (Apple `*_ms`, Google `*Millis`).
public typealias Millis = Int64

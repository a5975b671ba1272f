import Facts

/// Why ``RecordParser`` could not turn a raw record into a ``ParsedRecord``: the quarantine reason and a
/// human-readable detail (parser message with offset, the keys seen, the field at fault).
public struct RecordRejection: Error, Sendable, Hashable, CustomStringConvertible {
    public var reason: QuarantineReason
    public var detail: String

    public init(reason: QuarantineReason, detail: String) {
        self.reason = reason
        self.detail = detail
    }

    public var description: String { "\(reason.rawValue): \(detail)" }
}

/// Two metric states that must not be merged because they were computed with different report options: their
/// sums count other months, other prices or other currencies, so adding them would mean nothing.
public struct MetricsMergeError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The option that differs, as `report` names it: `--as-of`, `--timezone`, `--prices`, `--currency` or
    /// `--fx-rates`.
    public var option: String
    /// Where they differ: both values, or the first entry of a file that differs.
    public var detail: String

    public init(option: String, detail: String) {
        self.option = option
        self.detail = detail
    }

    public var description: String { "computed with another \(option): \(detail)" }
}

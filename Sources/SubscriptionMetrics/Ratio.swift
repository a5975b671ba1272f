import Foundation

/// A rate kept as the two counts it is made of, so that it is exact until written and "undefined" (a zero
/// denominator) is a value of its own rather than 0 or NaN.
public struct Ratio: Sendable, Hashable {
    public var numerator: Int
    public var denominator: Int

    /// `numerator / denominator`; a zero denominator makes the rate undefined (empty in CSV, null in JSON).
    public init(_ numerator: Int, _ denominator: Int) {
        self.numerator = numerator
        self.denominator = denominator
    }

    /// `nil` when the denominator is 0.
    public var value: Double? { denominator == 0 ? nil : Double(numerator) / Double(denominator) }

    /// 6 decimal places (`0.666667`), or the empty cell when undefined.
    public var cell: Cell {
        guard let value else { return .empty }
        return .number(Self.fixed(value, places: 6))
    }

    /// `String(format: "%.Nf")`, never writing a negative zero.
    static func fixed(_ value: Double, places: Int) -> String {
        let text = String(format: "%.\(places)f", value)
        return text.hasPrefix("-") && text.dropFirst().allSatisfy({ $0 == "0" || $0 == "." }) ? String(text.dropFirst()) : text
    }
}

/// Exact parsing of plain decimal numbers (`4.99`, `0.0067`, `480`) into scaled integers: money must never pass
/// through a binary floating point value.
enum DecimalText {
    /// `text` × 10^`scale` exactly, or `nil` when it is not a plain non-negative decimal, has more than `scale`
    /// fractional digits, or does not fit.
    static func scaled(_ text: String, scale: Int) -> Int64? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts[0]
        let fraction = parts.count > 1 ? parts[1] : ""
        guard !(whole.isEmpty && fraction.isEmpty), fraction.count <= scale,
              whole.allSatisfy(\.isASCIIDigit), fraction.allSatisfy(\.isASCIIDigit) else { return nil }
        var value: Int64 = 0
        for digit in Array(whole.utf8) + Array(fraction.utf8) + Array(repeating: UInt8(ascii: "0"), count: scale - fraction.count) {
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int64(digit - UInt8(ascii: "0")))
            if overflow1 || overflow2 { return nil }
            value = sum
        }
        return value
    }

    /// A positive decimal as an exact fraction `numerator / 10^k` with the fewest digits `k` needed (at most
    /// `maxFractionDigits`), or `nil`.
    static func fraction(_ text: String, maxFractionDigits: Int) -> (numerator: Int64, denominator: Int64)? {
        let digits = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let fractionDigits = digits.count > 1 ? digits[1].count : 0
        guard fractionDigits <= maxFractionDigits, let numerator = scaled(text, scale: fractionDigits) else { return nil }
        var denominator: Int64 = 1
        for _ in 0..<fractionDigits { denominator *= 10 }
        return (numerator, denominator)
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}

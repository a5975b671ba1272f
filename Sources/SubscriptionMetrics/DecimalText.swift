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
        var fractionDigits = digits.count > 1 ? digits[1].count : 0
        guard fractionDigits <= maxFractionDigits, var numerator = scaled(text, scale: fractionDigits) else { return nil }
        // Trailing zeros are no digits needed: `1.50` is 3/2 written 15/10, the same fraction as `1.5`.
        while fractionDigits > 0, numerator % 10 == 0 {
            numerator /= 10
            fractionDigits -= 1
        }
        var denominator: Int64 = 1
        for _ in 0..<fractionDigits { denominator *= 10 }
        return (numerator, denominator)
    }

    /// `value` / 10^`scale` as a plain decimal with no trailing fractional zeros (`4990000`, 6 → `4.99`): the
    /// inverse of ``scaled(_:scale:)`` for messages.
    static func text(_ value: Int64, scale: Int) -> String {
        var digits = String(value.magnitude)
        if digits.count <= scale { digits = String(repeating: "0", count: scale - digits.count + 1) + digits }
        let whole = digits.dropLast(scale)
        var fraction = digits.suffix(scale)
        while fraction.last == "0" { fraction = fraction.dropLast() }
        return (value < 0 ? "-" : "") + whole + (fraction.isEmpty ? "" : "." + fraction)
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}

/// Exact integer arithmetic for money and time: `a × b / c` computed with a 128-bit intermediate, rounded half
/// away from zero, so that conversions and normalisations never lose a micro to overflow or to floating point.
/// Values beyond Int64 (only absurd inputs produce them) saturate instead of trapping: bad input never crashes.
enum FullWidth {
    /// `a × b / c` rounded half away from zero; `c` must be positive. Saturates at ±Int64.max.
    static func multiplyDivideRounded(_ a: Int64, _ b: Int64, _ c: Int64) -> Int64 {
        let negative = (a < 0) != (b < 0) && a != 0 && b != 0
        let product = a.magnitude.multipliedFullWidth(by: b.magnitude)
        let divisor = c.magnitude
        // The quotient fits in 64 bits exactly when the high half is below the divisor.
        guard divisor > 0, product.high < divisor else { return negative ? -Int64.max : Int64.max }
        let (quotient, remainder) = divisor.dividingFullWidth(product)
        let rounded = remainder >= divisor - remainder && remainder > 0 ? quotient &+ 1 : quotient
        guard rounded <= UInt64(Int64.max), rounded >= quotient else { return negative ? -Int64.max : Int64.max }
        return negative ? -Int64(rounded) : Int64(rounded)
    }

    /// `a + b`, saturating at ±Int64.max.
    static func add(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        if overflow { return b < 0 ? -Int64.max : Int64.max }
        return max(sum, -Int64.max)
    }

    /// `a − b`, saturating at ±Int64.max (so that `abs` of the result never traps).
    static func subtract(_ a: Int64, _ b: Int64) -> Int64 {
        let (difference, overflow) = a.subtractingReportingOverflow(b)
        if overflow { return b > 0 ? -Int64.max : Int64.max }
        return max(difference, -Int64.max)
    }
}

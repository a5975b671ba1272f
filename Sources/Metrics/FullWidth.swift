/// Exact integer arithmetic for money: `a × b / c` computed with a 128-bit intermediate, rounded half away
/// from zero, so that conversions and normalisations never lose a micro to overflow or to floating point.
enum FullWidth {
    /// `a × b / c` rounded half away from zero. `c` must be positive and the result must fit in Int64 (true for
    /// any real amount of money in micros).
    static func multiplyDivideRounded(_ a: Int64, _ b: Int64, _ c: Int64) -> Int64 {
        let product = a.multipliedFullWidth(by: b)
        let (quotient, remainder) = c.dividingFullWidth(product)
        guard remainder != 0, remainder.magnitude * 2 >= c.magnitude else { return quotient }
        return product.high < 0 ? quotient - 1 : quotient + 1
    }
}

/// Money formatting: integer micros to decimals (rounded half away from zero).
enum Money {
    /// The shortest exact decimal of `micros` (e.g. 4_990_000 → "4.99", 480_000_000 → "480").
    static func decimal(micros: Int64) -> String {
        let negative = micros < 0
        let magnitude = negative ? -micros : micros
        var fraction = String(magnitude % 1_000_000)
        fraction = String(repeating: "0", count: 6 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        let whole = String(magnitude / 1_000_000)
        return (negative ? "-" : "") + whole + (fraction.isEmpty ? "" : "." + fraction)
    }

    /// Two decimals of a value given in units of `1 / divisor` of the major unit, rounded half away from zero.
    static func twoDecimals(_ value: Int64, divisor: Int64 = 1_000_000) -> String {
        text(cents: cents(value, divisor: divisor))
    }

    /// Hundredths of the major unit in a value given in units of `1 / divisor` of it, rounded half away from zero.
    static func cents(_ value: Int64, divisor: Int64) -> Int64 {
        let negative = value < 0
        let magnitude = negative ? -value : value
        // cents = round(magnitude * 100 / divisor)
        let scaled = magnitude * 100
        var cents = scaled / divisor
        if (scaled % divisor) * 2 >= divisor { cents += 1 }
        return negative ? -cents : cents
    }

    /// `cents` hundredths written with two decimals: `4.99`, `-7.96`, `0.00`.
    static func text(cents: Int64) -> String {
        let magnitude = cents < 0 ? -cents : cents
        return (cents < 0 ? "-" : "") + "\(magnitude / 100)." + (magnitude % 100 < 10 ? "0" : "") + "\(magnitude % 100)"
    }
}

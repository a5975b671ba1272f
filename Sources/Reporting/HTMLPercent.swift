/// Rates as people read them: the CSV's decimal fraction (`0.057471`) as a percentage with one decimal (`5.7%`),
/// computed exactly from the text (×100, rounded half away from zero), so the page never disagrees with the CSV
/// by a floating-point rounding. The browser check recomputes it the same way.
enum HTMLPercent {
    /// `0.057471` → `5.7%`, `-0.0125` → `-1.3%`, `1.000000` → `100.0%`; the empty (undefined) cell stays empty;
    /// `nil` for a text that is not a plain decimal.
    static func text(_ fraction: String) -> String? {
        if fraction.isEmpty { return "" }
        guard let (negative, billionths) = parse(fraction) else { return nil }
        // A tenth of a percent is a thousandth of the fraction: 1,000,000 billionths; half away from zero.
        let tenths = (billionths + 500_000) / 1_000_000
        return (negative && tenths != 0 ? "-" : "") + String(tenths / 10) + "." + String(tenths % 10) + "%"
    }

    /// The rate in whole percent (`0.571428` → `57%`), for heat-map cells too small for a decimal; empty when
    /// undefined, `nil` for a text that is not a plain decimal.
    static func whole(_ fraction: String) -> String? {
        if fraction.isEmpty { return "" }
        guard let (negative, billionths) = parse(fraction) else { return nil }
        let percent = (billionths + 5_000_000) / 10_000_000
        return (negative && percent != 0 ? "-" : "") + String(percent) + "%"
    }

    /// The sign and the magnitude in billionths of a plain decimal with at most 9 decimals.
    private static func parse(_ fraction: String) -> (negative: Bool, billionths: Int64)? {
        var digits = Substring(fraction)
        let negative = digits.hasPrefix("-")
        if negative { digits = digits.dropFirst() }
        let parts = digits.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let whole = parts.first, !whole.isEmpty, whole.count <= 9,
              whole.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        let decimals = parts.count == 2 ? parts[1] : ""
        guard parts.count == 1 || !decimals.isEmpty, decimals.count <= 9, decimals.allSatisfy({ $0.isASCII && $0.isNumber }),
              let billionths = Int64(whole + decimals + String(repeating: "0", count: 9 - decimals.count)) else { return nil }
        return (negative, billionths)
    }
}

/// Exact sums of CSV decimal texts (`4.99`, `-480.00`, `12`), for the few page figures that total rows the CSV
/// keeps apart (revenue and MRR per currency). Summed as integers scaled by 10^places, so no binary floating
/// point touches a money figure; written the way the CSV writes money (`places` decimals, `-` sign).
enum HTMLDecimal {
    /// The sum of `texts` written with `places` decimals, or `nil` when a text is not a plain decimal with at most
    /// `places` decimals, or the sum does not fit in 64 bits.
    static func sum(_ texts: [String], places: Int) -> String? {
        total(texts, places: places).map { written($0, places: places) }
    }

    /// `times` × (the sum of `texts` − the sum of `minus`), written with `places` decimals, or `nil` as for
    /// ``sum(_:places:)``: net new MRR (mrr_end − mrr_start), ARR (12 × mrr_end).
    static func sum(_ texts: [String], minus: [String], times: Int64, places: Int) -> String? {
        guard let plus = total(texts, places: places), let less = total(minus, places: places) else { return nil }
        let (difference, overflow) = plus.subtractingReportingOverflow(less)
        let (product, overflow2) = difference.multipliedReportingOverflow(by: times)
        return overflow || overflow2 ? nil : written(product, places: places)
    }

    private static func total(_ texts: [String], places: Int) -> Int64? {
        var total: Int64 = 0
        for text in texts {
            guard let value = scaled(text, places: places) else { return nil }
            let (next, overflow) = total.addingReportingOverflow(value)
            guard !overflow else { return nil }
            total = next
        }
        return total
    }

    private static func scaled(_ text: String, places: Int) -> Int64? {
        var digits = Substring(text)
        let negative = digits.hasPrefix("-")
        if negative { digits = digits.dropFirst() }
        let parts = digits.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let whole = parts.first, !whole.isEmpty,
              whole.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        let fraction = parts.count == 2 ? parts[1] : ""
        guard fraction.count <= places, fraction.allSatisfy({ $0.isASCII && $0.isNumber }),
              parts.count == 1 || !fraction.isEmpty,
              let value = Int64(whole + fraction + String(repeating: "0", count: places - fraction.count)) else { return nil }
        return negative ? -value : value
    }

    private static func written(_ value: Int64, places: Int) -> String {
        let magnitude = String(value.magnitude)
        let padded = String(repeating: "0", count: max(0, places + 1 - magnitude.count)) + magnitude
        let body = places == 0 ? padded : padded.dropLast(places) + "." + padded.suffix(places)
        return (value < 0 ? "-" : "") + body
    }
}

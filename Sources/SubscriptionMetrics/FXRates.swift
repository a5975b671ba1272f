/// Monthly exchange rates into the reporting currency, from the `--fx-rates` file
/// (CSV `month,currency,rate_to_reporting_currency`; a month's rate applies to the amounts of that month).
///
/// Rates are kept as exact decimal fractions (at most 12 decimal places) so that conversion is exact until the
/// converted amount is rounded to cents.
public struct FXRates: Sendable {
    private struct Key: Hashable {
        var month: String
        var currency: String
    }

    private var rates: [Key: ExchangeRate] = [:]

    /// Parses the CSV text. Throws on a missing column, a month not written `YYYY-MM`, an invalid currency, a
    /// rate that is not a positive decimal, two different rates for one month and currency, or a rate other than 1
    /// for `reportingCurrency` itself (its amounts are converted at 1, so such a row would be ignored unsaid).
    public init(csv: String, reportingCurrency: String? = nil) throws(ConfigurationError) {
        let file = "fx-rates"
        let table = try ConfigurationCSV(text: csv, file: file, columns: ["month", "currency", "rate_to_reporting_currency"])
        for row in table.rows {
            func fail(_ reason: String) -> ConfigurationError { ConfigurationError(file: file, line: row.line, reason: reason) }
            let month = row.value("month")
            let parts = month.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0].count == 4, parts[1].count == 2,
                  parts[0].allSatisfy(\.isASCIIDigit), let monthOfYear = Int(parts[1]), (1...12).contains(monthOfYear) else {
                throw fail("month `\(month)` is not written YYYY-MM")
            }
            let currency = row.value("currency").uppercased()
            guard currency.count == 3, currency.allSatisfy({ $0.isASCII && $0.isLetter }) else {
                throw fail("currency `\(row.value("currency"))` is not an ISO 4217 code")
            }
            let text = row.value("rate_to_reporting_currency")
            guard let fraction = DecimalText.fraction(text, maxFractionDigits: 12), fraction.numerator > 0 else {
                throw fail("rate `\(text)` is not a positive decimal with at most 12 places")
            }
            let key = Key(month: month, currency: currency)
            let rate = ExchangeRate(numerator: fraction.numerator, denominator: fraction.denominator)
            if currency == reportingCurrency?.uppercased(), !rate.equals(.one) {
                throw fail("rate `\(text)` for \(currency), the reporting currency (--currency), whose amounts are "
                    + "converted at 1: give 1 or leave the row out")
            }
            if let known = rates[key], !known.equals(rate) {
                throw fail("a second, different rate for \(currency) in \(month)")
            }
            rates[key] = rate
        }
    }

    /// The rate of `currency` in `month` (`YYYY-MM`), if the file has one.
    func rate(month: String, currency: String) -> ExchangeRate? {
        rates[Key(month: month, currency: currency)]
    }
}

/// One unit of a currency in the reporting currency, exactly: `numerator / denominator`.
struct ExchangeRate: Sendable, Hashable {
    var numerator: Int64
    var denominator: Int64

    static let one = ExchangeRate(numerator: 1, denominator: 1)

    /// Same value (`1.5` and `1.50` are one rate).
    func equals(_ other: ExchangeRate) -> Bool {
        numerator.multipliedFullWidth(by: other.denominator) == other.numerator.multipliedFullWidth(by: denominator)
    }

    /// The rate as a plain decimal (`0.92`) when its denominator is a power of ten (as every rate read from a
    /// file is), else `numerator/denominator`: for messages.
    var text: String {
        var rest = denominator
        var scale = 0
        while rest > 1, rest % 10 == 0 {
            rest /= 10
            scale += 1
        }
        return rest == 1 ? DecimalText.text(numerator, scale: scale) : "\(numerator)/\(denominator)"
    }
}

extension FXRates {
    /// The first rate (in month and currency order) that `other` does not have the same, in words; `nil` when
    /// both have the same rates.
    func firstDifference(from other: FXRates) -> String? {
        for key in Set(rates.keys).union(other.rates.keys).sorted(by: Self.precedes) {
            let (ours, theirs) = (rates[key], other.rates[key])
            if let ours, let theirs, ours.equals(theirs) { continue }
            func text(_ rate: ExchangeRate?) -> String { rate.map(\.text) ?? "no rate" }
            return "\(key.currency) in \(key.month): \(text(ours)) here, \(text(theirs)) in the other"
        }
        return nil
    }

    /// Every rate, in month and currency order, as the exact fraction it was read as.
    func encode(to writer: inout PartialWriter) {
        writer.count(rates.count)
        for key in rates.keys.sorted(by: Self.precedes) {
            writer.string(key.month)
            writer.string(key.currency)
            writer.signed(rates[key]?.numerator ?? 0)
            writer.signed(rates[key]?.denominator ?? 0)
        }
    }

    /// The rates `encode` wrote.
    init(from reader: inout PartialReader) throws(PartialStateError) {
        for _ in 0..<(try reader.count()) {
            let key = Key(month: try reader.string(), currency: try reader.string())
            let rate = ExchangeRate(numerator: try reader.signed(), denominator: try reader.signed())
            guard rate.numerator > 0, rate.denominator > 0, rates.updateValue(rate, forKey: key) == nil else {
                throw .damaged("an exchange rate is repeated or not positive")
            }
        }
    }

    private static func precedes(_ lhs: Key, _ rhs: Key) -> Bool {
        ByteOrder.precedes([lhs.month, lhs.currency], [rhs.month, rhs.currency])
    }
}

import Facts
import Foundation

/// What a report run needs besides the histories; built by the CLI from `report`'s options.
public struct ReportOptions: Sendable {
    /// The as-of time (ms, UTC): everything after it is ignored and its month is reported up to it.
    public var asOf: Millis
    /// The reporting time zone: months are calendar months there.
    public var timeZone: TimeZone
    /// Prices for payloads that state none, and product durations.
    public var prices: PriceList
    /// `--currency`: when set, revenue_monthly gains the `*_converted` columns.
    public var reportingCurrency: String?
    /// `--fx-rates`: monthly rates into ``reportingCurrency``.
    public var fxRates: FXRates?

    public init(asOf: Millis, timeZone: TimeZone = .gmt, prices: PriceList = .empty,
                reportingCurrency: String? = nil, fxRates: FXRates? = nil) {
        self.asOf = asOf
        self.timeZone = timeZone
        self.prices = prices
        self.reportingCurrency = reportingCurrency
        self.fxRates = fxRates
    }
}

extension ReportOptions {
    /// The first option in which `other` differs from these (as-of, time zone, prices, reporting currency, FX
    /// rates), or `nil` when states computed with either can be merged. Time zones compare by identifier.
    func difference(from other: ReportOptions) -> MetricsMergeError? {
        if asOf != other.asOf {
            func text(_ instant: Millis) -> String {
                let formatter = ISO8601DateFormatter()
                formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
                return formatter.string(from: MonthTable.date(instant))
            }
            return MetricsMergeError(option: "--as-of", detail: "\(text(asOf)) here, \(text(other.asOf)) in the other")
        }
        if timeZone.identifier != other.timeZone.identifier {
            return MetricsMergeError(option: "--timezone",
                                     detail: "\(timeZone.reportName) here, \(other.timeZone.reportName) in the other")
        }
        if let detail = prices.firstDifference(from: other.prices) {
            return MetricsMergeError(option: "--prices", detail: detail)
        }
        if reportingCurrency != other.reportingCurrency {
            return MetricsMergeError(option: "--currency",
                                     detail: "\(reportingCurrency ?? "none") here, \(other.reportingCurrency ?? "none") in the other")
        }
        switch (fxRates, other.fxRates) {
        case (nil, nil):
            return nil
        case let (ours?, theirs?):
            return ours.firstDifference(from: theirs).map { MetricsMergeError(option: "--fx-rates", detail: $0) }
        case (let ours, _):
            return MetricsMergeError(option: "--fx-rates", detail: ours == nil ? "none here, a file in the other" : "a file here, none in the other")
        }
    }

    /// Every option, the price list and FX rates in full, so that a merge needs no option files of its own.
    func encode(to writer: inout PartialWriter) {
        writer.signed(asOf)
        writer.string(timeZone.identifier)
        prices.encode(to: &writer)
        writer.string(reportingCurrency ?? "")
        writer.unsigned(fxRates == nil ? 0 : 1)
        fxRates?.encode(to: &writer)
    }

    /// The options `encode` wrote; the time zone must be known here too.
    init(from reader: inout PartialReader) throws(PartialStateError) {
        let asOf = try reader.signed()
        let identifier = try reader.string()
        guard let timeZone = TimeZone(identifier: identifier) else { throw .damaged("time zone `\(identifier)` is unknown here") }
        let prices = try PriceList(from: &reader)
        let currency = try reader.string()
        let fxRates: FXRates? = switch try reader.unsigned() {
        case 0: nil
        case 1: try FXRates(from: &reader)
        case let flag: throw .damaged("unexpected flag \(flag)")
        }
        self.init(asOf: asOf, timeZone: timeZone, prices: prices, reportingCurrency: currency.isEmpty ? nil : currency,
                  fxRates: fxRates)
    }
}

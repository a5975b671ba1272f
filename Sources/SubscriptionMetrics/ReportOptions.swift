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

import Facts
import Foundation

/// The figures of the last complete month that people look at first (the `run` summary, the HTML header),
/// taken from the report's own rows so they are the same numbers as in the CSV files.
public struct Headline: Sendable, Hashable {
    /// `YYYY-MM` of the last month whose end is at or before the as-of time (in the reporting time zone),
    /// the as-of month included when as-of is its last millisecond.
    public var month: String
    /// The `all`/`all` row of `subscriptions_monthly` for ``month``.
    public var subscriptions: SubscriptionsMonthlyRow
    /// The `(platform, all)` rows, by platform.
    public var byPlatform: [SubscriptionsMonthlyRow]
    /// `mrr_end` summed over products, per currency (sorted by currency; unknown currency left out).
    public var mrrByCurrency: [CurrencyAmount]
    /// Billing-issue episodes that started in ``month`` (both platforms): recovered / (recovered + lost).
    public var recoveryRate: Ratio
    /// Trials that started in ``month`` (both platforms): converted / (converted + abandoned).
    public var trialConversion: Ratio

    /// An amount in one currency.
    public struct CurrencyAmount: Sendable, Hashable {
        public var currency: String
        public var amount: Money
    }
}

extension ReportTables {
    /// The headline figures of the last complete month, or `nil` when no month is complete by `asOf`.
    public func headline(asOf: Millis, timeZone: TimeZone) -> Headline? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let instant = Date(timeIntervalSince1970: Double(asOf + 1) / 1000)
        guard let monthStart = calendar.dateInterval(of: .month, for: instant)?.start,
              let previous = calendar.date(byAdding: .month, value: -1, to: monthStart) else { return nil }
        let components = calendar.dateComponents([.year, .month], from: previous)
        guard let year = components.year, let number = components.month else { return nil }
        let month = String(format: "%04d-%02d", year, number)
        guard let total = subscriptionsMonthly.first(where: { $0.month == month && $0.platform == "all" && $0.productId == "all" })
        else { return nil }
        let platforms = subscriptionsMonthly.filter { $0.month == month && $0.platform != "all" && $0.productId == "all" }
        var mrr: [String: Money] = [:]
        for row in revenueMonthly where row.month == month && !row.currency.isEmpty {
            mrr[row.currency] = mrr[row.currency].map { $0.adding(row.mrrEnd) } ?? row.mrrEnd
        }
        let grace = graceRecovery.filter { $0.month == month }
        let recovered = grace.reduce(0) { $0 + $1.recovered }
        let lost = grace.reduce(0) { $0 + $1.lost }
        let trials = trialConversion.filter { $0.cohortMonth == month }
        let converted = trials.reduce(0) { $0 + $1.converted }
        let abandoned = trials.reduce(0) { $0 + $1.abandoned }
        return Headline(month: month, subscriptions: total, byPlatform: platforms,
                        mrrByCurrency: mrr.keys.sorted().compactMap { currency in
                            mrr[currency].map { Headline.CurrencyAmount(currency: currency, amount: $0) }
                        },
                        recoveryRate: Ratio(recovered, recovered + lost),
                        trialConversion: Ratio(converted, converted + abandoned))
    }
}

extension Money {
    /// The exact sum of two amounts of one currency, whatever fraction of a micro each counts in.
    func adding(_ other: Money) -> Money {
        if unitsPerMicro == other.unitsPerMicro {
            return Money(units: FullWidth.add(units, other.units), unitsPerMicro: unitsPerMicro)
        }
        return Money(units: FullWidth.add(FullWidth.multiplyDivideRounded(units, other.unitsPerMicro, 1), FullWidth.multiplyDivideRounded(other.units, unitsPerMicro, 1)),
                     unitsPerMicro: unitsPerMicro * other.unitsPerMicro)
    }
}

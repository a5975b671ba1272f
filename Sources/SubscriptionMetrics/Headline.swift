import Facts
import Foundation

/// The figures of the last complete month that people look at first (the `run` summary, the HTML header),
/// taken from the report's own rows so they are the same numbers as in the CSV files.
public struct Headline: Sendable, Hashable {
    /// `YYYY-MM`: see ``ReportTables/lastCompleteMonth(asOf:timeZone:)``.
    public var month: String
    /// The `all`/`all` row of `subscriptions_monthly` for ``month``.
    public var subscriptions: SubscriptionsMonthlyRow
    /// The `(platform, all)` rows, by platform.
    public var byPlatform: [SubscriptionsMonthlyRow]
    /// `mrr_end` cells summed over products, per currency (sorted by currency; unknown currency left out).
    public var mrrByCurrency: [CurrencyAmount]
    /// The `grace_recovery` rows of ``month``, by platform. metrics.md defines recovery per platform only, so
    /// no rate pooled over both is made up here.
    public var grace: [GraceRecoveryRow]
    /// The `trial_conversion` rows of the ``month`` cohort, by platform and product (as metrics.md defines it).
    public var trials: [TrialConversionRow]

    /// An amount in one currency.
    public struct CurrencyAmount: Sendable, Hashable {
        public var currency: String
        public var amount: Money
    }
}

extension ReportTables {
    /// `YYYY-MM` of the last calendar month of `timeZone` that is over by `asOf` (ms, UTC). The as-of time is
    /// inclusive (events at it count), so a month is complete when its last millisecond is at or before it:
    /// an as-of of 2024-04-30T23:59:59.999Z completes April in UTC.
    public static func lastCompleteMonth(asOf: Millis, timeZone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let next = asOf == Millis.max ? asOf : asOf + 1
        let parts = calendar.dateComponents([.year, .month], from: Date(timeIntervalSince1970: Double(next) / 1000))
        return MonthTable.label((parts.year ?? 1970) * 12 + (parts.month ?? 1) - 2)
    }

    /// The headline figures of the last complete month, or `nil` when no month is complete by `asOf`.
    public func headline(asOf: Millis, timeZone: TimeZone) -> Headline? {
        let month = Self.lastCompleteMonth(asOf: asOf, timeZone: timeZone)
        guard let total = subscriptionsMonthly.first(where: { $0.month == month && $0.platform == "all" && $0.productId == "all" })
        else { return nil }
        let platforms = subscriptionsMonthly.filter { $0.month == month && $0.platform != "all" && $0.productId == "all" }
        // The sum of the written (rounded) cells, so that it equals what an analyst adds up in the CSV.
        var mrrCents: [String: Int64] = [:]
        for row in revenueMonthly where row.month == month && !row.currency.isEmpty {
            mrrCents[row.currency, default: 0] += row.mrrEnd.cents
        }
        let mrr = mrrCents.mapValues { Money(micros: $0 * 10_000) }
        return Headline(month: month, subscriptions: total, byPlatform: platforms,
                        mrrByCurrency: mrr.keys.sorted().compactMap { currency in
                            mrr[currency].map { Headline.CurrencyAmount(currency: currency, amount: $0) }
                        },
                        grace: graceRecovery.filter { $0.month == month },
                        trials: trialConversion.filter { $0.cohortMonth == month })
    }
}

import Facts
@testable import SubscriptionMetrics
import Testing

/// mrr_movements (metrics.md): one test per kind of movement with its exact amounts, then the rounding and the
/// converted columns. Every table here also passes `expectMRRIdentities` (see `tables` in TestSupport).
@Suite struct MRRMovementTests {
    static let header = "month,platform,currency,mrr_start,new,expansion,contraction,churned,reactivation,mrr_end,"
        + "new_count,expansion_count,contraction_count,churned_count,reactivation_count"

    static func prices() throws -> PriceList {
        try PriceList(csv: """
            platform,product_id,currency,price,duration
            apple,basic_monthly,USD,4.99,P1M
            apple,basic_monthly,EUR,4.49,P1M
            apple,pro_monthly,USD,9.99,P1M
            apple,basic_yearly,USD,39.99,P1Y
            apple,pro_yearly,USD,39.99,P1Y
            google,basic_monthly,USD,4.99,P1M
            google,pro_monthly,USD,9.99,P1M
            """)
    }

    static func movements(_ histories: [SubscriptionHistory], asOf: Millis) throws -> [String] {
        try tables(histories, asOf: asOf, prices: prices()).mrrMovements.map(line)
    }

    static let endOfFebruary = utc(2024, 2, 29, 23, 59, 59, ms: 999)
    static let endOfMarch = utc(2024, 3, 31, 23, 59, 59, ms: 999)
    static let endOfApril = utc(2024, 4, 30, 23, 59, 59, ms: 999)

    /// A trial, then the first paid period: `new` in the month the paid period starts (the trial has no MRR);
    /// a renewal at the same price moves nothing.
    @Test func firstPurchaseIsNew() throws {
        let history = SubscriptionHistory(platform: .apple, id: "first", periods: [
            trial("t", "basic_monthly", utc(2024, 1, 3, 10), utc(2024, 1, 10, 10)),
            paid("p1", "basic_monthly", utc(2024, 1, 10, 10), utc(2024, 2, 10, 10)),
            paid("p2", "basic_monthly", utc(2024, 2, 10, 10), utc(2024, 3, 10, 10)),
        ], currencies: ["USD"])
        #expect(try Self.movements([history], asOf: Self.endOfFebruary) == [
            "2024-01,apple,USD,0.00,4.99,0.00,0.00,0.00,0.00,4.99,1,0,0,0,0",
            "2024-02,apple,USD,4.99,0.00,0.00,0.00,0.00,0.00,4.99,0,0,0,0,0",
        ])
    }

    /// An upgrade inside a period (the old period ends `replaced` at the change): the difference of the two
    /// monthly prices is expansion, 9.99 − 4.99 = 5.00; no churn, no new.
    @Test func upgradeIsExpansion() throws {
        let history = SubscriptionHistory(platform: .apple, id: "up", periods: [
            paid("1", "basic_monthly", utc(2024, 1, 5), utc(2024, 2, 5)),
            paid("2", "basic_monthly", utc(2024, 2, 5), utc(2024, 2, 20), reason: .replaced),
            paid("3", "pro_monthly", utc(2024, 2, 20), utc(2024, 3, 20)),
        ])
        #expect(try Self.movements([history], asOf: Self.endOfFebruary) == [
            "2024-01,apple,USD,0.00,4.99,0.00,0.00,0.00,0.00,4.99,1,0,0,0,0",
            "2024-02,apple,USD,4.99,0.00,5.00,0.00,0.00,0.00,9.99,0,1,0,0,0",
        ])
    }

    /// A Google downgrade at the renewal (a linked token, one subscription): contraction of 5.00.
    @Test func downgradeIsContraction() throws {
        let history = SubscriptionHistory(platform: .google, id: "down", periods: [
            paid("GPA.1", "pro_monthly", utc(2024, 1, 5), utc(2024, 2, 5), reason: .replaced),
            paid("GPA.2", "basic_monthly", utc(2024, 2, 5), utc(2024, 3, 5)),
        ])
        #expect(try Self.movements([history], asOf: Self.endOfFebruary) == [
            "2024-01,google,USD,0.00,9.99,0.00,0.00,0.00,0.00,9.99,1,0,0,0,0",
            "2024-02,google,USD,9.99,0.00,0.00,5.00,0.00,0.00,4.99,0,0,1,0,0",
        ])
    }

    /// A price increase at the renewal (the payload states each period's price): expansion 5.99 − 4.99 = 1.00
    /// in the month the dearer period starts.
    @Test func priceIncreaseIsExpansion() throws {
        let history = SubscriptionHistory(platform: .apple, id: "price", periods: [
            paid("1", "basic_monthly", utc(2024, 1, 5), utc(2024, 2, 5), price: 4_990_000),
            paid("2", "basic_monthly", utc(2024, 2, 5), utc(2024, 3, 5), price: 5_990_000),
        ])
        #expect(try Self.movements([history], asOf: Self.endOfFebruary) == [
            "2024-01,apple,USD,0.00,4.99,0.00,0.00,0.00,0.00,4.99,1,0,0,0,0",
            "2024-02,apple,USD,4.99,0.00,1.00,0.00,0.00,0.00,5.99,0,1,0,0,0",
        ])
    }

    /// Auto-renew off: the subscription churns its whole MRR in the month it expires; the month after, with no
    /// MRR at either end and no movement, has no row.
    @Test func voluntaryChurn() throws {
        let history = SubscriptionHistory(platform: .apple, id: "off", periods: [
            paid("1", "basic_monthly", utc(2024, 1, 5), utc(2024, 2, 5)),
            paid("2", "basic_monthly", utc(2024, 2, 5), utc(2024, 3, 5), reason: .voluntary),
        ])
        #expect(try Self.movements([history], asOf: Self.endOfApril) == [
            "2024-01,apple,USD,0.00,4.99,0.00,0.00,0.00,0.00,4.99,1,0,0,0,0",
            "2024-02,apple,USD,4.99,0.00,0.00,0.00,0.00,0.00,4.99,0,0,0,0,0",
            "2024-03,apple,USD,4.99,0.00,0.00,0.00,4.99,0.00,0.00,0,0,0,1,0",
        ])
    }

    /// A failed renewal on 03-25 with 7 days of grace: still paid (and its MRR counted) at the end of March, churned
    /// at G in April (involuntary), the month subscriptions_monthly counts the churn in too.
    @Test func involuntaryChurnAtTheEndOfGrace() throws {
        let history = SubscriptionHistory(platform: .google, id: "lost", periods: [
            paid("GPA.1", "basic_monthly", utc(2024, 2, 25, 10), utc(2024, 3, 25, 10), reason: .billingIssue),
        ], episodes: [BillingEpisode(failedAt: utc(2024, 3, 25, 10), graceEnd: utc(2024, 4, 1, 10),
                                     outcome: .lost(at: utc(2024, 4, 25, 10)))])
        let result = try tables([history], asOf: Self.endOfApril, prices: Self.prices())
        #expect(result.mrrMovements.map(line) == [
            "2024-02,google,USD,0.00,4.99,0.00,0.00,0.00,0.00,4.99,1,0,0,0,0",
            "2024-03,google,USD,4.99,0.00,0.00,0.00,0.00,0.00,4.99,0,0,0,0,0",
            "2024-04,google,USD,4.99,0.00,0.00,0.00,4.99,0.00,0.00,0,0,0,1,0",
        ])
        #expect(result.subscriptionRow("2024-04", "google", "all")?.churnedInvoluntary == 1)
    }

    /// A refund ends the period at the revocation: churned in that month. A subscription bought and refunded
    /// inside one month has no MRR at either end: no movement and no row (revenue_monthly still shows it).
    @Test func refundIsChurn() throws {
        let refunded = SubscriptionHistory(platform: .apple, id: "refund", periods: [
            paid("1", "basic_monthly", utc(2024, 1, 5), utc(2024, 2, 5)),
            paid("2", "basic_monthly", utc(2024, 2, 5), utc(2024, 3, 5), revokedAt: utc(2024, 2, 20)),
        ])
        let withinAMonth = SubscriptionHistory(platform: .google, id: "brief", periods: [
            paid("GPA.b", "basic_monthly", utc(2024, 1, 3), utc(2024, 2, 3), revokedAt: utc(2024, 1, 9)),
        ])
        let result = try tables([refunded, withinAMonth], asOf: Self.endOfFebruary, prices: Self.prices())
        #expect(result.mrrMovements.map(line) == [
            "2024-01,apple,USD,0.00,4.99,0.00,0.00,0.00,0.00,4.99,1,0,0,0,0",
            "2024-02,apple,USD,4.99,0.00,0.00,0.00,4.99,0.00,0.00,0,0,0,1,0",
        ])
        #expect(result.revenueMonthly.map(line).contains("2024-01,google,basic_monthly,USD,4.99,4.99,0.00,1,1,0,0.00"))
    }

    /// Win-back after expiry: an Apple resubscribe is the same subscription, paid before, so `reactivation`; a
    /// Google resubscribe is a new unlinked token, a new subscription that was never paid, so `new`.
    @Test func winBackAfterExpiry() throws {
        let apple = SubscriptionHistory(platform: .apple, id: "1000", periods: [
            paid("1001", "basic_monthly", utc(2024, 1, 5), utc(2024, 2, 5), reason: .voluntary),
            paid("1002", "basic_monthly", utc(2024, 4, 10), utc(2024, 5, 10)),
        ])
        let googleFirst = SubscriptionHistory(platform: .google, id: "token-1", periods: [
            paid("GPA.1", "basic_monthly", utc(2024, 1, 6), utc(2024, 2, 6), reason: .voluntary),
        ])
        let googleBack = SubscriptionHistory(platform: .google, id: "token-2", periods: [
            paid("GPA.2", "basic_monthly", utc(2024, 4, 11), utc(2024, 5, 11)),
        ])
        #expect(try Self.movements([apple, googleFirst, googleBack], asOf: Self.endOfApril) == [
            "2024-01,apple,USD,0.00,4.99,0.00,0.00,0.00,0.00,4.99,1,0,0,0,0",
            "2024-01,google,USD,0.00,4.99,0.00,0.00,0.00,0.00,4.99,1,0,0,0,0",
            "2024-02,apple,USD,4.99,0.00,0.00,0.00,4.99,0.00,0.00,0,0,0,1,0",
            "2024-02,google,USD,4.99,0.00,0.00,0.00,4.99,0.00,0.00,0,0,0,1,0",
            "2024-04,apple,USD,0.00,0.00,0.00,0.00,0.00,4.99,4.99,0,0,0,0,1",
            "2024-04,google,USD,0.00,4.99,0.00,0.00,0.00,0.00,4.99,1,0,0,0,0",
        ])
    }

    /// A subscription whose storefront moves from the US to Germany: amounts compare only within a currency, so
    /// it churns 4.99 USD and reactivates 4.49 EUR in the month the EUR period starts.
    @Test func currencyChangeChurnsInOneAndReactivatesInTheOther() throws {
        let history = SubscriptionHistory(platform: .apple, id: "moved", periods: [
            paid("1", "basic_monthly", utc(2024, 1, 5), utc(2024, 2, 5), currency: "USD"),
            paid("2", "basic_monthly", utc(2024, 2, 5), utc(2024, 3, 5), currency: "EUR"),
        ], currencies: ["EUR", "USD"])
        #expect(try Self.movements([history], asOf: Self.endOfFebruary) == [
            "2024-01,apple,USD,0.00,4.99,0.00,0.00,0.00,0.00,4.99,1,0,0,0,0",
            "2024-02,apple,EUR,0.00,0.00,0.00,0.00,0.00,4.49,4.49,0,0,0,0,1",
            "2024-02,apple,USD,4.99,0.00,0.00,0.00,4.99,0.00,0.00,0,0,0,1,0",
        ])
    }

    /// Several subscriptions in one month add up, amounts and counts: two upgrades, one new, one churn.
    @Test func movementsOfSeveralSubscriptionsAdd() throws {
        func upgrade(_ id: String, _ day: Int) -> SubscriptionHistory {
            SubscriptionHistory(platform: .apple, id: id, periods: [
                paid(id + ".1", "basic_monthly", utc(2024, 1, day), utc(2024, 2, day)),
                paid(id + ".2", "basic_monthly", utc(2024, 2, day), utc(2024, 2, day + 3), reason: .replaced),
                paid(id + ".3", "pro_monthly", utc(2024, 2, day + 3), utc(2024, 3, day + 3)),
            ])
        }
        let newcomer = SubscriptionHistory(platform: .apple, id: "n", periods: [
            paid("n.1", "pro_monthly", utc(2024, 2, 14), utc(2024, 3, 14)),
        ])
        let leaver = SubscriptionHistory(platform: .apple, id: "l", periods: [
            paid("l.1", "basic_monthly", utc(2024, 1, 20), utc(2024, 2, 20), reason: .voluntary),
        ])
        #expect(try Self.movements([upgrade("u1", 3), upgrade("u2", 9), newcomer, leaver], asOf: Self.endOfFebruary) == [
            "2024-01,apple,USD,0.00,14.97,0.00,0.00,0.00,0.00,14.97,3,0,0,0,0",
            "2024-02,apple,USD,14.97,9.99,10.00,0.00,4.99,0.00,29.97,1,2,0,1,0",
        ])
    }

    /// Rounding (DESIGN.md "Numbers"): a yearly 39.99 is 3.3325 a month. One subscriber: mrr_end 3.33; two:
    /// 6.665 → 6.67 (revenue_monthly rounds the exact sum per product). The second's `new` is then written 3.34,
    /// not 3.33, so that 3.33 + new = 6.67: the cent the rounding leaves over goes to the largest movement.
    @Test func roundedMovementsAddUpToTheWrittenEnds() throws {
        let first = SubscriptionHistory(platform: .apple, id: "y1", periods: [
            paid("y1", "basic_yearly", utc(2024, 1, 5), utc(2025, 1, 5)),
        ])
        let second = SubscriptionHistory(platform: .apple, id: "y2", periods: [
            paid("y2", "basic_yearly", utc(2024, 2, 5), utc(2025, 2, 5)),
        ])
        let result = try tables([first, second], asOf: Self.endOfFebruary, prices: Self.prices())
        #expect(result.revenueMonthly.map(\.mrrEnd.text) == ["3.33", "6.67"])
        #expect(result.mrrMovements.map(line) == [
            "2024-01,apple,USD,0.00,3.33,0.00,0.00,0.00,0.00,3.33,1,0,0,0,0",
            "2024-02,apple,USD,3.33,3.34,0.00,0.00,0.00,0.00,6.67,1,0,0,0,0",
        ])
    }

    /// A crossgrade at the same price moves no MRR, but moves 3.3325 from one rounded product to another:
    /// revenue_monthly's cells go from 6.67 (one product) to 3.33 + 3.33 = 6.66. With no movement to carry the
    /// cent, it is written as contraction (count 0), so the row still adds up to the CSV's own mrr_end.
    @Test func aCentWithNoMovementBehindItIsExpansionOrContraction() throws {
        let staying = SubscriptionHistory(platform: .apple, id: "s", periods: [
            paid("s", "basic_yearly", utc(2024, 1, 5), utc(2025, 1, 5)),
        ])
        let crossgrading = SubscriptionHistory(platform: .apple, id: "c", periods: [
            paid("c.1", "basic_yearly", utc(2024, 1, 6), utc(2024, 2, 10), reason: .replaced),
            paid("c.2", "pro_yearly", utc(2024, 2, 10), utc(2025, 2, 10)),
        ])
        let result = try tables([staying, crossgrading], asOf: Self.endOfFebruary, prices: Self.prices())
        #expect(result.revenueMonthly.filter { $0.month == "2024-02" }.map(\.mrrEnd.text) == ["3.33", "3.33"])
        #expect(result.mrrMovements.map(line) == [
            "2024-01,apple,USD,0.00,6.67,0.00,0.00,0.00,0.00,6.67,2,0,0,0,0",
            "2024-02,apple,USD,6.67,0.00,0.00,0.01,0.00,0.00,6.66,0,0,0,0,0",
        ])
    }

    /// `--currency EUR --fx-rates`: every amount at the month's rate, EUR itself at 1. `mrr_start_converted` is the
    /// start at this month's rate (4.99 × 0.92 = 4.59 in February, where January ended at 4.99 × 0.90 = 4.49):
    /// the difference is the change of rate, not a movement. A month with no rate has empty converted cells and
    /// is reported as missing even when revenue_monthly has no row that month.
    @Test func convertedColumns() throws {
        let fx = try FXRates(csv: """
            month,currency,rate_to_reporting_currency
            2024-01,USD,0.90
            2024-02,USD,0.92
            """)
        let dollars = SubscriptionHistory(platform: .apple, id: "usd", periods: [
            paid("u1", "basic_monthly", utc(2024, 1, 5), utc(2024, 2, 5)),
            paid("u2", "basic_monthly", utc(2024, 2, 5), utc(2024, 3, 5), reason: .voluntary),
        ])
        let euros = SubscriptionHistory(platform: .apple, id: "eur", periods: [
            paid("e1", "basic_monthly", utc(2024, 2, 7), utc(2024, 3, 7), currency: "EUR"),
        ])
        let result = try tables([dollars, euros], asOf: Self.endOfMarch, prices: Self.prices(), currency: "EUR", fx: fx)
        let text = try #require(result.texts.first { $0.name == "mrr_movements" })
        #expect(text.columns.joined(separator: ",") == Self.header
                + ",mrr_start_converted,new_converted,expansion_converted,contraction_converted,churned_converted,reactivation_converted,mrr_end_converted")
        #expect(result.mrrMovements.map(line) == [
            "2024-01,apple,USD,0.00,4.99,0.00,0.00,0.00,0.00,4.99,1,0,0,0,0,0.00,4.49,0.00,0.00,0.00,0.00,4.49",
            "2024-02,apple,EUR,0.00,4.49,0.00,0.00,0.00,0.00,4.49,1,0,0,0,0,0.00,4.49,0.00,0.00,0.00,0.00,4.49",
            "2024-02,apple,USD,4.99,0.00,0.00,0.00,0.00,0.00,4.99,0,0,0,0,0,4.59,0.00,0.00,0.00,0.00,0.00,4.59",
            "2024-03,apple,EUR,4.49,0.00,0.00,0.00,4.49,0.00,0.00,0,0,0,1,0,4.49,0.00,0.00,0.00,4.49,0.00,0.00",
            "2024-03,apple,USD,4.99,0.00,0.00,0.00,4.99,0.00,0.00,0,0,0,1,0,,,,,,,",
        ])
        #expect(!result.revenueMonthly.contains { $0.month == "2024-03" })
        #expect(result.missingExchangeRates == ["2024-03 USD"])
    }

    /// The months are the reporting time zone's: a purchase at 2024-01-31T20:00Z is February in Tokyo.
    @Test func monthsOfTheReportingTimeZone() throws {
        let history = SubscriptionHistory(platform: .google, id: "tokyo", periods: [
            paid("GPA.t", "basic_monthly", utc(2024, 1, 31, 20), utc(2024, 2, 29, 20)),
        ])
        let result = try tables([history], asOf: utc(2024, 2, 20), timeZone: "Asia/Tokyo", prices: Self.prices())
        #expect(result.mrrMovements.map(line) == ["2024-02,google,USD,0.00,4.99,0.00,0.00,0.00,0.00,4.99,1,0,0,0,0"])
    }

    /// The rounding rule itself (the simulator's truth implements it separately, with the same cases).
    @Test func centsAddUpToTheTarget() {
        #expect(MRRMovementAggregator.centsAddingUp([333, 0, 0, 0, 0], exact: [39_990_000, 0, 0, 0, 0], to: 334) == [334, 0, 0, 0, 0])
        #expect(MRRMovementAggregator.centsAddingUp([500, 0, 0, 200, 0], exact: [60_000_000, 0, 0, 24_000_000, 0], to: 301)
                == [501, 0, 0, 200, 0])
        #expect(MRRMovementAggregator.centsAddingUp([1, 0, 0, 200, 0], exact: [120_000, 0, 0, 24_000_000, 0], to: -201)
                == [1, 0, 0, 202, 0])
        #expect(MRRMovementAggregator.centsAddingUp([1, 0, 0, 1, 0], exact: [96_000, 0, 0, 144_000, 0], to: 2) == [2, 0, 0, 0, 0])
        #expect(MRRMovementAggregator.centsAddingUp([0, 0, 0, 0, 0], exact: [0, 0, 0, 0, 0], to: -1) == [0, 0, 1, 0, 0])
        #expect(MRRMovementAggregator.centsAddingUp([0, 0, 0, 0, 0], exact: [0, 0, 0, 0, 0], to: 1) == [0, 1, 0, 0, 0])
    }

    /// The state merges by adding: amounts and counts of two partial sums add up to the sums of the whole.
    @Test func sumsMergeByAdding() {
        var left = MRRMovementSums(.new, twelfths: 59_880_000)
        left.add(MRRMovementSums(.churned, twelfths: 12))
        var right = MRRMovementSums(.new, twelfths: 119_880_000)
        right.add(MRRMovementSums(.expansion, twelfths: 60_000_000))
        left.add(right)
        #expect(left.twelfths == [179_760_000, 60_000_000, 0, 12, 0])
        #expect([left.newCount, left.expansionCount, left.contractionCount, left.churnedCount, left.reactivationCount] == [2, 1, 0, 1, 0])
    }
}

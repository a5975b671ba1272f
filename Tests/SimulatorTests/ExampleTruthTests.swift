import Foundation
import Testing
@testable import Simulator

/// examples.md's subscriptions A, B and C, built as timelines, give exactly examples.md's rows.
struct ExampleTruthTests {
    static func at(_ text: String) -> Int64 {
        // "2024-01-10 10:00" in UTC
        let parts = text.split(whereSeparator: { "- :".contains($0) }).compactMap { Int($0) }
        let midnight = UTCCalendar.monthStart(year: parts[0], month: parts[1])
        return midnight + Int64(parts[2] - 1) * 86_400_000 + Int64(parts[3]) * 3_600_000 + Int64(parts[4]) * 60_000
    }

    static func period(_ product: String, _ start: String, _ end: String, trial: Bool = false, price: Int64?,
                       currency: String, reason: TimelineEndReason = .renewed, revoked: String? = nil) -> TimelinePeriod {
        TimelinePeriod(product: product, transactionId: start, token: "", start: at(start), end: at(end), trial: trial,
                       priceMicros: price, currency: currency, revokedAt: revoked.map(at), endReason: reason)
    }

    static var subscriptions: [TimelineSubscription] {
        var a = TimelineSubscription(platform: .apple, id: "A")
        a.periods = [
            period("premium_monthly", "2024-01-10 10:00", "2024-01-17 10:00", trial: true, price: nil, currency: "JPY"),
            period("premium_monthly", "2024-01-17 10:00", "2024-02-17 10:00", price: 480_000_000, currency: "JPY", reason: .billingIssue),
            period("premium_monthly", "2024-02-20 08:00", "2024-03-17 10:00", price: 480_000_000, currency: "JPY"),
            period("premium_monthly", "2024-03-17 10:00", "2024-04-17 10:00", price: 480_000_000, currency: "JPY", reason: .voluntary),
        ]
        a.episodes = [TimelineEpisode(start: at("2024-02-17 10:00"), graceEnd: at("2024-03-04 10:00"),
                                      outcome: .recovered(at("2024-02-20 08:00")))]
        var b = TimelineSubscription(platform: .google, id: "B")
        b.periods = [
            period("premium_monthly", "2024-01-31 23:00", "2024-02-29 23:00", price: 4_990_000, currency: "USD", reason: .billingIssue),
            period("premium_monthly", "2024-03-15 12:00", "2024-04-15 12:00", price: 4_990_000, currency: "USD",
                   reason: .other, revoked: "2024-04-01 09:00"),
        ]
        b.episodes = [TimelineEpisode(start: at("2024-02-29 23:00"), graceEnd: at("2024-03-07 23:00"),
                                      outcome: .recovered(at("2024-03-15 12:00")))]
        var c = TimelineSubscription(platform: .apple, id: "C")
        c.periods = [
            period("premium_weekly", "2024-02-26 06:00", "2024-03-04 06:00", price: 1_990_000, currency: "USD"),
            period("premium_weekly", "2024-03-04 06:00", "2024-03-11 06:00", price: 1_990_000, currency: "USD", reason: .billingIssue),
        ]
        c.episodes = [TimelineEpisode(start: at("2024-03-11 06:00"), graceEnd: at("2024-03-11 06:00"),
                                      outcome: .lost(at("2024-05-10 06:00")))]
        return [a, b, c]
    }

    static func tables() -> [String: [String]] {
        var calculator = TruthCalculator(
            scenario: .init(name: "example", timeZoneIdentifier: "UTC", asOf: at("2024-04-30 23:59") + 59_999),
            durations: ["premium_monthly": "P1M", "premium_weekly": "P1W"], monthCount: 6)
        for subscription in subscriptions { calculator.add(subscription) }
        var result: [String: [String]] = [:]
        for (name, rows) in calculator.tables() {
            result[name] = rows.map { row in row.map(\.1).joined(separator: ",") }
            result[name + ".header"] = [rows.first.map { $0.map(\.0).joined(separator: ",") } ?? ""]
        }
        return result
    }

    static func csv(_ text: String) -> [String] { text.split(separator: "\n").map(String.init) }

    @Test func subscriptionsMonthlyTotals() {
        let t = ExampleTruthTests.tables()
        let expected = ExampleTruthTests.csv("""
        month,platform,product_id,active_start,new,reactivated,product_changes_in,product_changes_out,churned,churned_voluntary,churned_involuntary,churned_refund,churned_paused,churned_other,active_end,churn_rate,net_churn_rate,active_trials_end
        2024-01,all,all,0,2,0,0,0,0,0,0,0,0,0,2,,,0
        2024-01,apple,all,0,1,0,0,0,0,0,0,0,0,0,1,,,0
        2024-01,google,all,0,1,0,0,0,0,0,0,0,0,0,1,,,0
        2024-02,all,all,2,1,0,0,0,0,0,0,0,0,0,3,0.000000,0.000000,0
        2024-02,apple,all,1,1,0,0,0,0,0,0,0,0,0,2,0.000000,0.000000,0
        2024-02,google,all,1,0,0,0,0,0,0,0,0,0,0,1,0.000000,0.000000,0
        2024-03,all,all,3,0,1,0,0,2,0,2,0,0,0,2,0.666667,0.333333,0
        2024-03,apple,all,2,0,0,0,0,1,0,1,0,0,0,1,0.500000,0.500000,0
        2024-03,google,all,1,0,1,0,0,1,0,1,0,0,0,1,1.000000,0.000000,0
        2024-04,all,all,2,0,0,0,0,2,1,0,1,0,0,0,1.000000,1.000000,0
        2024-04,apple,all,1,0,0,0,0,1,1,0,0,0,0,0,1.000000,1.000000,0
        2024-04,google,all,1,0,0,0,0,1,0,0,1,0,0,0,1.000000,1.000000,0
        """)
        #expect(t["subscriptions_monthly.header"] == [expected[0]])
        #expect((t["subscriptions_monthly"] ?? []).filter { $0.contains(",all,") } == Array(expected.dropFirst()))
    }

    @Test func revenueMonthly() {
        let t = ExampleTruthTests.tables()
        let expected = ExampleTruthTests.csv("""
        month,platform,product_id,currency,gross,refunds,net,transactions,refunded_transactions,unpriced_transactions,mrr_end
        2024-01,apple,premium_monthly,JPY,480.00,0.00,480.00,1,0,0,480.00
        2024-01,google,premium_monthly,USD,4.99,0.00,4.99,1,0,0,4.99
        2024-02,apple,premium_monthly,JPY,480.00,0.00,480.00,1,0,0,480.00
        2024-02,apple,premium_weekly,USD,1.99,0.00,1.99,1,0,0,7.96
        2024-02,google,premium_monthly,USD,0.00,0.00,0.00,0,0,0,4.99
        2024-03,apple,premium_monthly,JPY,480.00,0.00,480.00,1,0,0,480.00
        2024-03,apple,premium_weekly,USD,1.99,0.00,1.99,1,0,0,0.00
        2024-03,google,premium_monthly,USD,4.99,0.00,4.99,1,0,0,4.99
        2024-04,google,premium_monthly,USD,0.00,4.99,-4.99,0,1,0,0.00
        """)
        #expect(t["revenue_monthly.header"] == [expected[0]])
        #expect(t["revenue_monthly"] == Array(expected.dropFirst()))
    }

    /// B's March churn at G and reactivation at T cancel out (only the two ends of a month compare), B's refund
    /// churns 4.99 in April, C's weekly price counts ×4; each mrr_end is the sum of revenue_monthly's.
    @Test func mrrMovements() {
        let t = ExampleTruthTests.tables()
        let expected = ExampleTruthTests.csv("""
        month,platform,currency,mrr_start,new,expansion,contraction,churned,reactivation,mrr_end,new_count,expansion_count,contraction_count,churned_count,reactivation_count
        2024-01,apple,JPY,0.00,480.00,0.00,0.00,0.00,0.00,480.00,1,0,0,0,0
        2024-01,google,USD,0.00,4.99,0.00,0.00,0.00,0.00,4.99,1,0,0,0,0
        2024-02,apple,JPY,480.00,0.00,0.00,0.00,0.00,0.00,480.00,0,0,0,0,0
        2024-02,apple,USD,0.00,7.96,0.00,0.00,0.00,0.00,7.96,1,0,0,0,0
        2024-02,google,USD,4.99,0.00,0.00,0.00,0.00,0.00,4.99,0,0,0,0,0
        2024-03,apple,JPY,480.00,0.00,0.00,0.00,0.00,0.00,480.00,0,0,0,0,0
        2024-03,apple,USD,7.96,0.00,0.00,0.00,7.96,0.00,0.00,0,0,0,1,0
        2024-03,google,USD,4.99,0.00,0.00,0.00,0.00,0.00,4.99,0,0,0,0,0
        2024-04,apple,JPY,480.00,0.00,0.00,0.00,480.00,0.00,0.00,0,0,0,1,0
        2024-04,google,USD,4.99,0.00,0.00,0.00,4.99,0.00,0.00,0,0,0,1,0
        """)
        #expect(t["mrr_movements.header"] == [expected[0]])
        #expect(t["mrr_movements"] == Array(expected.dropFirst()))
    }

    /// DESIGN.md's rounding of mrr_movements, as the simulator implements it: the written ends are the sums of
    /// rounded product cells, and the cents left over go to the largest movement, or, with no movement to take
    /// them, to expansion / contraction.
    @Test func movementRoundingAddsUp() {
        // 6.665 → 6.67 at the end, 3.33 at the start: new 3.3325 is written 3.34.
        #expect(MRRMovementTruth.addingUp([333, 0, 0, 0, 0], exact: [39_990_000, 0, 0, 0, 0], counts: [1, 0, 0, 0, 0], to: 334)
                == [334, 0, 0, 0, 0])
        // A churn of 2.00 and a new of 5.00 where 1 cent more is needed: the new (larger) takes it.
        #expect(MRRMovementTruth.addingUp([500, 0, 0, 200, 0], exact: [60_000_000, 0, 0, 24_000_000, 0], counts: [1, 0, 0, 1, 0], to: 301)
                == [501, 0, 0, 200, 0])
        // 2 cents fewer: the churn, the larger, takes both.
        #expect(MRRMovementTruth.addingUp([1, 0, 0, 200, 0], exact: [120_000, 0, 0, 24_000_000, 0], counts: [1, 0, 0, 1, 0], to: -201)
                == [1, 0, 0, 202, 0])
        // 2 cents more, the larger a churn of 0.012 written 0.01: it gives its cent (never below zero), the new
        // of 0.008 takes the other.
        #expect(MRRMovementTruth.addingUp([1, 0, 0, 1, 0], exact: [96_000, 0, 0, 144_000, 0], counts: [1, 0, 0, 1, 0], to: 2)
                == [2, 0, 0, 0, 0])
        // No movement at all: a cent down is contraction, a cent up expansion.
        #expect(MRRMovementTruth.addingUp([0, 0, 0, 0, 0], exact: [0, 0, 0, 0, 0], counts: [0, 0, 0, 0, 0], to: -1) == [0, 0, 1, 0, 0])
        #expect(MRRMovementTruth.addingUp([0, 0, 0, 0, 0], exact: [0, 0, 0, 0, 0], counts: [0, 0, 0, 0, 0], to: 1) == [0, 1, 0, 0, 0])
    }

    @Test func graceRecovery() {
        let t = ExampleTruthTests.tables()
        let expected = ExampleTruthTests.csv("""
        month,platform,episodes,with_grace,recovered_in_grace,recovered_in_retry,lost,open,recovery_rate,grace_recovery_rate,median_hours_to_recover
        2024-02,apple,1,1,1,0,0,0,1.000000,1.000000,70.00
        2024-02,google,1,1,0,1,0,0,1.000000,0.000000,349.00
        2024-03,apple,1,0,0,0,0,1,,,
        """)
        #expect(t["grace_recovery.header"] == [expected[0]])
        #expect(t["grace_recovery"] == Array(expected.dropFirst()))
    }

    @Test func trialConversion() {
        let t = ExampleTruthTests.tables()
        #expect(t["trial_conversion.header"] == ["cohort_month,platform,product_id,trials,converted,abandoned,pending,conversion_rate"])
        #expect(t["trial_conversion"] == ["2024-01,apple,premium_monthly,1,1,0,0,1.000000"])
    }

    @Test func retentionCohorts() {
        let t = ExampleTruthTests.tables()
        let expected = ExampleTruthTests.csv("""
        cohort_month,platform,duration,cohort_size,period,retained,retention_rate,complete
        2024-01,apple,P1M,1,0,1,1.000000,true
        2024-01,apple,P1M,1,1,1,1.000000,true
        2024-01,apple,P1M,1,2,1,1.000000,false
        2024-01,google,P1M,1,0,1,1.000000,true
        2024-01,google,P1M,1,1,0,0.000000,true
        2024-01,google,P1M,1,2,0,0.000000,false
        2024-02,apple,P1W,1,0,1,1.000000,true
        2024-02,apple,P1W,1,1,1,1.000000,false
        2024-02,apple,P1W,1,2,0,0.000000,false
        2024-02,apple,P1W,1,3,0,0.000000,false
        2024-02,apple,P1W,1,4,0,0.000000,false
        2024-02,apple,P1W,1,5,0,0.000000,false
        2024-02,apple,P1W,1,6,0,0.000000,false
        2024-02,apple,P1W,1,7,0,0.000000,false
        2024-02,apple,P1W,1,8,0,0.000000,false
        """)
        #expect(t["retention_cohorts.header"] == [expected[0]])
        #expect(t["retention_cohorts"] == Array(expected.dropFirst()))
    }

    @Test func moneyRoundsHalfAwayFromZero() {
        #expect(Money.twoDecimals(4_990_000) == "4.99")
        #expect(Money.twoDecimals(-4_990_000) == "-4.99")
        #expect(Money.twoDecimals(1_005_000) == "1.01")
        #expect(Money.twoDecimals(-1_005_000) == "-1.01")
        #expect(Money.twoDecimals(1_990_000 * 48, divisor: 12_000_000) == "7.96")
        #expect(Money.decimal(micros: 480_000_000) == "480")
    }
}

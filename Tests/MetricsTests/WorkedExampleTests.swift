import Facts
import SubscriptionMetrics
import Testing

/// examples.md, row by row: subscriptions A, B and C built directly as histories.
@Suite struct WorkedExampleTests {
    static let asOf = utc(2024, 4, 30, 23, 59, 59, ms: 999)

    static var histories: [SubscriptionHistory] {
        let a = SubscriptionHistory(
            platform: .apple, id: "A",
            periods: [
                trial("a0", "premium_monthly", utc(2024, 1, 10, 10), utc(2024, 1, 17, 10), currency: "JPY"),
                paid("a1", "premium_monthly", utc(2024, 1, 17, 10), utc(2024, 2, 17, 10), currency: "JPY", reason: .billingIssue),
                paid("a2", "premium_monthly", utc(2024, 2, 20, 8), utc(2024, 3, 17, 10), currency: "JPY"),
                paid("a3", "premium_monthly", utc(2024, 3, 17, 10), utc(2024, 4, 17, 10), currency: "JPY", reason: .voluntary),
            ],
            episodes: [BillingEpisode(failedAt: utc(2024, 2, 17, 10), graceEnd: utc(2024, 3, 4, 10),
                                      outcome: .recovered(at: utc(2024, 2, 20, 8)))],
            currencies: ["JPY"])
        let b = SubscriptionHistory(
            platform: .google, id: "B",
            periods: [
                paid("GPA.b", "premium_monthly", utc(2024, 1, 31, 23), utc(2024, 2, 29, 23), reason: .billingIssue),
                paid("GPA.b..1", "premium_monthly", utc(2024, 3, 15, 12), utc(2024, 4, 15, 12), revokedAt: utc(2024, 4, 1, 9)),
            ],
            episodes: [BillingEpisode(failedAt: utc(2024, 2, 29, 23), graceEnd: utc(2024, 3, 7, 23),
                                      outcome: .recovered(at: utc(2024, 3, 15, 12)))],
            currencies: ["USD"])
        let c = SubscriptionHistory(
            platform: .apple, id: "C",
            periods: [
                paid("c1", "premium_weekly", utc(2024, 2, 26, 6), utc(2024, 3, 4, 6)),
                paid("c2", "premium_weekly", utc(2024, 3, 4, 6), utc(2024, 3, 11, 6), reason: .billingIssue),
            ],
            // Apple V1 sends no expiry notice: lost at E + 60 days, which is after as-of, so the episode is open.
            episodes: [BillingEpisode(failedAt: utc(2024, 3, 11, 6), graceEnd: utc(2024, 3, 11, 6),
                                      outcome: .lost(at: utc(2024, 3, 11, 6) + 60 * day))],
            currencies: ["USD"])
        return [a, b, c]
    }

    func exampleTables() throws -> ReportTables {
        try tables(Self.histories, asOf: Self.asOf, prices: examplePrices())
    }

    @Test func subscriptionTotalRows() throws {
        let totals = try exampleTables().subscriptionsMonthly.filter { $0.productId == "all" }.map(line)
        #expect(totals == [
            "2024-01,all,all,0,2,0,0,0,0,0,0,0,0,0,2,,,0",
            "2024-01,apple,all,0,1,0,0,0,0,0,0,0,0,0,1,,,0",
            "2024-01,google,all,0,1,0,0,0,0,0,0,0,0,0,1,,,0",
            "2024-02,all,all,2,1,0,0,0,0,0,0,0,0,0,3,0.000000,0.000000,0",
            "2024-02,apple,all,1,1,0,0,0,0,0,0,0,0,0,2,0.000000,0.000000,0",
            "2024-02,google,all,1,0,0,0,0,0,0,0,0,0,0,1,0.000000,0.000000,0",
            "2024-03,all,all,3,0,1,0,0,2,0,2,0,0,0,2,0.666667,0.333333,0",
            "2024-03,apple,all,2,0,0,0,0,1,0,1,0,0,0,1,0.500000,0.500000,0",
            "2024-03,google,all,1,0,1,0,0,1,0,1,0,0,0,1,1.000000,0.000000,0",
            "2024-04,all,all,2,0,0,0,0,2,1,0,1,0,0,0,1.000000,1.000000,0",
            "2024-04,apple,all,1,0,0,0,0,1,1,0,0,0,0,0,1.000000,1.000000,0",
            "2024-04,google,all,1,0,0,0,0,1,0,0,1,0,0,0,1.000000,1.000000,0",
        ])
    }

    @Test func subscriptionProductRows() throws {
        let result = try exampleTables()
        #expect(result.subscriptions(platform: "apple", product: "premium_weekly") == [
            "2024-02,apple,premium_weekly,0,1,0,0,0,0,0,0,0,0,0,1,,,0",
            "2024-03,apple,premium_weekly,1,0,0,0,0,1,0,1,0,0,0,0,1.000000,1.000000,0",
            "2024-04,apple,premium_weekly,0,0,0,0,0,0,0,0,0,0,0,0,,,0",
        ])
        #expect(result.subscriptions(platform: "apple", product: "premium_monthly").first
                == "2024-01,apple,premium_monthly,0,1,0,0,0,0,0,0,0,0,0,1,,,0")
    }

    @Test func revenueRows() throws {
        #expect(try exampleTables().revenueMonthly.map(line) == [
            "2024-01,apple,premium_monthly,JPY,480.00,0.00,480.00,1,0,0,480.00",
            "2024-01,google,premium_monthly,USD,4.99,0.00,4.99,1,0,0,4.99",
            "2024-02,apple,premium_monthly,JPY,480.00,0.00,480.00,1,0,0,480.00",
            "2024-02,apple,premium_weekly,USD,1.99,0.00,1.99,1,0,0,7.96",
            "2024-02,google,premium_monthly,USD,0.00,0.00,0.00,0,0,0,4.99",
            "2024-03,apple,premium_monthly,JPY,480.00,0.00,480.00,1,0,0,480.00",
            "2024-03,apple,premium_weekly,USD,1.99,0.00,1.99,1,0,0,0.00",
            "2024-03,google,premium_monthly,USD,4.99,0.00,4.99,1,0,0,4.99",
            "2024-04,google,premium_monthly,USD,0.00,4.99,-4.99,0,1,0,0.00",
        ])
    }

    /// examples.md's mrr_movements rows: B's March churn (at G) and reactivation (at T) cancel out, since only the
    /// two ends of a month are compared; B's refund churns 4.99 in April; C's weekly price counts ×4.
    @Test func mrrMovementRows() throws {
        let result = try exampleTables()
        #expect(result.texts.first { $0.name == "mrr_movements" }?.columns.joined(separator: ",")
                == "month,platform,currency,mrr_start,new,expansion,contraction,churned,reactivation,mrr_end,new_count,expansion_count,contraction_count,churned_count,reactivation_count")
        #expect(result.mrrMovements.map(line) == [
            "2024-01,apple,JPY,0.00,480.00,0.00,0.00,0.00,0.00,480.00,1,0,0,0,0",
            "2024-01,google,USD,0.00,4.99,0.00,0.00,0.00,0.00,4.99,1,0,0,0,0",
            "2024-02,apple,JPY,480.00,0.00,0.00,0.00,0.00,0.00,480.00,0,0,0,0,0",
            "2024-02,apple,USD,0.00,7.96,0.00,0.00,0.00,0.00,7.96,1,0,0,0,0",
            "2024-02,google,USD,4.99,0.00,0.00,0.00,0.00,0.00,4.99,0,0,0,0,0",
            "2024-03,apple,JPY,480.00,0.00,0.00,0.00,0.00,0.00,480.00,0,0,0,0,0",
            "2024-03,apple,USD,7.96,0.00,0.00,0.00,7.96,0.00,0.00,0,0,0,1,0",
            "2024-03,google,USD,4.99,0.00,0.00,0.00,0.00,0.00,4.99,0,0,0,0,0",
            "2024-04,apple,JPY,480.00,0.00,0.00,0.00,480.00,0.00,0.00,0,0,0,1,0",
            "2024-04,google,USD,4.99,0.00,0.00,0.00,4.99,0.00,0.00,0,0,0,1,0",
        ])
    }

    @Test func graceRecoveryRows() throws {
        #expect(try exampleTables().graceRecovery.map(line) == [
            "2024-02,apple,1,1,1,0,0,0,1.000000,1.000000,70.00",
            "2024-02,google,1,1,0,1,0,0,1.000000,0.000000,349.00",
            "2024-03,apple,1,0,0,0,0,1,,,",
        ])
    }

    @Test func trialConversionRows() throws {
        #expect(try exampleTables().trialConversion.map(line) == [
            "2024-01,apple,premium_monthly,1,1,0,0,1.000000",
        ])
    }

    @Test func retentionRows() throws {
        #expect(try exampleTables().retentionCohorts.map(line) == [
            "2024-01,apple,P1M,1,0,1,1.000000,true",
            "2024-01,apple,P1M,1,1,1,1.000000,true",
            "2024-01,apple,P1M,1,2,1,1.000000,false",
            "2024-01,google,P1M,1,0,1,1.000000,true",
            "2024-01,google,P1M,1,1,0,0.000000,true",
            "2024-01,google,P1M,1,2,0,0.000000,false",
            "2024-02,apple,P1W,1,0,1,1.000000,true",
            "2024-02,apple,P1W,1,1,1,1.000000,false",
            "2024-02,apple,P1W,1,2,0,0.000000,false",
            "2024-02,apple,P1W,1,3,0,0.000000,false",
            "2024-02,apple,P1W,1,4,0,0.000000,false",
            "2024-02,apple,P1W,1,5,0,0.000000,false",
            "2024-02,apple,P1W,1,6,0,0.000000,false",
            "2024-02,apple,P1W,1,7,0,0.000000,false",
            "2024-02,apple,P1W,1,8,0,0.000000,false",
        ])
    }

    /// Histories may arrive in any order: the tables are the same.
    @Test func orderOfHistoriesDoesNotMatter() throws {
        let forward = try exampleTables()
        let backward = try tables(Self.histories.reversed(), asOf: Self.asOf, prices: examplePrices())
        #expect(forward == backward)
    }
}

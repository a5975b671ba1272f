import Facts
import SubscriptionMetrics
import Testing

/// The timeline traps of metrics.md and DESIGN.md, one subscription each.
@Suite struct TimelineEdgeTests {
    /// "Just before the month begins": a spell ending exactly at 02-01 00:00 is active at the end of January and
    /// at the start of February, and churns in February.
    @Test func spellEndingExactlyAtMonthBoundary() throws {
        let history = SubscriptionHistory(platform: .apple, id: "s", periods: [
            paid("t1", "monthly", utc(2024, 1, 1), utc(2024, 2, 1), reason: .voluntary),
        ])
        let result = try tables([history], asOf: utc(2024, 3, 1))
        #expect(result.subscriptions(platform: "all", product: "all") == [
            "2024-01,all,all,0,1,0,0,0,0,0,0,0,0,0,1,,,0",
            "2024-02,all,all,1,0,0,0,0,1,1,0,0,0,0,0,1.000000,1.000000,0",
            "2024-03,all,all,0,0,0,0,0,0,0,0,0,0,0,0,,,0",
        ])
    }

    /// A spell starting exactly at the month start is not active at that month's start.
    @Test func spellStartingExactlyAtMonthBoundary() throws {
        let history = SubscriptionHistory(platform: .apple, id: "s", periods: [
            paid("t1", "monthly", utc(2024, 2, 1), utc(2024, 3, 1)),
        ])
        let result = try tables([history], asOf: utc(2024, 2, 20))
        #expect(result.subscriptions(platform: "apple", product: "monthly") == [
            "2024-02,apple,monthly,0,1,0,0,0,0,0,0,0,0,0,1,,,0",
        ])
    }

    /// Grace from 01-30 to 02-05 keeps the subscription paid at the end of January (with its MRR); the loss
    /// churns it in February, at G, as involuntary. The episode counts in January, the month of E.
    @Test func graceCrossingMonthBoundary() throws {
        let history = SubscriptionHistory(platform: .google, id: "g", periods: [
            paid("GPA.1", "monthly", utc(2023, 12, 30), utc(2024, 1, 30), price: 9_990_000, reason: .billingIssue),
        ], episodes: [
            BillingEpisode(failedAt: utc(2024, 1, 30), graceEnd: utc(2024, 2, 5), outcome: .lost(at: utc(2024, 2, 12))),
        ])
        let result = try tables([history], asOf: utc(2024, 2, 29, 23, 59, 59, ms: 999))
        #expect(result.subscriptions(platform: "google", product: "all") == [
            "2023-12,google,all,0,1,0,0,0,0,0,0,0,0,0,1,,,0",
            "2024-01,google,all,1,0,0,0,0,0,0,0,0,0,0,1,0.000000,0.000000,0",
            "2024-02,google,all,1,0,0,0,0,1,0,1,0,0,0,0,1.000000,1.000000,0",
        ])
        #expect(result.graceRecovery.map(line) == ["2024-01,google,1,1,0,0,1,0,0.000000,0.000000,"])
        #expect(result.revenueMonthly.map(line) == [
            "2023-12,google,monthly,USD,9.99,0.00,9.99,1,0,0,9.99",
            "2024-01,google,monthly,USD,0.00,0.00,0.00,0,0,0,9.99",
        ])
    }

    /// A user who cancels inside the grace phase (lost at L < G) ends the spell at L: the reason comes from the
    /// period (voluntary here), not from the billing issue, which only owns spells ending at G.
    @Test func cancelInsideGraceIsNotInvoluntary() throws {
        let history = SubscriptionHistory(platform: .google, id: "c", periods: [
            paid("GPA.c", "monthly", utc(2024, 1, 1), utc(2024, 2, 1), reason: .voluntary),
        ], episodes: [
            BillingEpisode(failedAt: utc(2024, 2, 1), graceEnd: utc(2024, 2, 8), outcome: .lost(at: utc(2024, 2, 3))),
        ])
        let result = try tables([history], asOf: utc(2024, 2, 29))
        #expect(result.subscriptionRow("2024-02", "google", "all").map(line)
                == "2024-02,google,all,1,0,0,0,0,1,1,0,0,0,0,0,1.000000,1.000000,0")
        #expect(result.graceRecovery.map(line) == ["2024-02,google,1,1,0,0,1,0,0.000000,0.000000,"])
    }

    /// The period a grace follows is refunded inside the grace: access ends at the refund, which is the churn's
    /// reason (revenue books the refund in the same month). Google loses the episode there; Apple's builder does
    /// not end it at a refund, and the grace is cut all the same.
    @Test func refundInsideGraceIsARefund() throws {
        for (platform, lostAt) in [(Platform.google, utc(2024, 2, 4)), (Platform.apple, utc(2024, 4, 1))] {
            let history = SubscriptionHistory(platform: platform, id: "r", periods: [
                paid("r1", "monthly", utc(2024, 1, 1), utc(2024, 2, 1), price: 4_990_000, revokedAt: utc(2024, 2, 4),
                     reason: .billingIssue),
            ], episodes: [
                BillingEpisode(failedAt: utc(2024, 2, 1), graceEnd: utc(2024, 2, 8), outcome: .lost(at: lostAt)),
            ])
            let result = try tables([history], asOf: utc(2024, 2, 29))
            #expect(result.subscriptionRow("2024-02", platform.rawValue, "all").map(line)
                    == "2024-02,\(platform.rawValue),all,1,0,0,0,0,1,0,0,1,0,0,0,1.000000,1.000000,0")
        }
    }

    /// Apple upgrade from basic to premium on 01-15 (the basic period is ended by the upgrade, not refunded),
    /// then the premium period is refunded on 01-20: a product change, then refund churn on premium.
    @Test func refundOfAnUpgradedSubscriptionsPeriod() throws {
        let history = SubscriptionHistory(platform: .apple, id: "u", periods: [
            paid("1", "basic", utc(2024, 1, 1), utc(2024, 1, 15), price: 4_990_000, reason: .replaced),
            paid("2", "premium", utc(2024, 1, 15), utc(2024, 2, 15), price: 9_990_000, revokedAt: utc(2024, 1, 20)),
        ])
        let result = try tables([history], asOf: utc(2024, 1, 31))
        #expect(result.subscriptionsMonthly.map(line) == [
            "2024-01,all,all,0,1,0,0,0,1,0,0,1,0,0,0,,,0",
            "2024-01,apple,all,0,1,0,0,0,1,0,0,1,0,0,0,,,0",
            "2024-01,apple,basic,0,1,0,0,1,0,0,0,0,0,0,0,,,0",
            "2024-01,apple,premium,0,0,0,1,0,1,0,0,1,0,0,0,,,0",
        ])
        #expect(result.revenueMonthly.map(line) == [
            "2024-01,apple,basic,USD,4.99,0.00,4.99,1,0,0,0.00",
            "2024-01,apple,premium,USD,9.99,9.99,0.00,1,1,0,0.00",
        ])
        // Only the basic period survives for retention; the cohort's duration comes from that period's length.
        #expect(result.retentionCohorts.isEmpty)
        let later = try tables([history], asOf: utc(2024, 2, 20))
        #expect(later.retentionCohorts.map(line) == [
            "2024-01,apple,P14D,1,0,1,1.000000,false",
            "2024-01,apple,P14D,1,1,0,0.000000,false",
        ])
    }

    /// Product changes are counted on the products, with churn_rate on the product held at the month start:
    /// basic's churn_rate is 1 (its spell ended this month) while its churned count is 0 (it ended on premium).
    @Test func productChangeThenChurnInSameMonth() throws {
        let history = SubscriptionHistory(platform: .google, id: "x", periods: [
            paid("GPA.1", "basic", utc(2024, 1, 10), utc(2024, 2, 10), reason: .replaced),
            paid("GPA.2", "premium", utc(2024, 2, 10), utc(2024, 2, 20), reason: .voluntary),
        ])
        let result = try tables([history], asOf: utc(2024, 2, 28))
        #expect(result.subscriptions(platform: "google", product: "basic").last
                == "2024-02,google,basic,1,0,0,0,1,0,0,0,0,0,0,0,1.000000,0.000000,0")
        #expect(result.subscriptions(platform: "google", product: "premium")
                == ["2024-02,google,premium,0,0,0,1,0,1,1,0,0,0,0,0,,,0"])
        #expect(result.subscriptions(platform: "google", product: "all").last
                == "2024-02,google,all,1,0,0,0,0,1,1,0,0,0,0,0,1.000000,1.000000,0")
    }

    /// Recovered in billing retry after the grace ran out: the spell ends at G (involuntary) and the recovery is
    /// a reactivated spell, both in the same month here.
    @Test func recoveryAfterGraceRanOutIsReactivated() throws {
        let history = SubscriptionHistory(platform: .apple, id: "r", periods: [
            paid("1", "monthly", utc(2024, 1, 1), utc(2024, 2, 1), reason: .billingIssue),
            paid("2", "monthly", utc(2024, 2, 20), utc(2024, 3, 20)),
        ], episodes: [
            BillingEpisode(failedAt: utc(2024, 2, 1), graceEnd: utc(2024, 2, 7), outcome: .recovered(at: utc(2024, 2, 20))),
        ])
        let result = try tables([history], asOf: utc(2024, 2, 29))
        #expect(result.subscriptions(platform: "apple", product: "all") == [
            "2024-01,apple,all,0,1,0,0,0,0,0,0,0,0,0,1,,,0",
            "2024-02,apple,all,1,0,1,0,0,1,0,1,0,0,0,1,1.000000,0.000000,0",
        ])
        #expect(result.graceRecovery.map(line) == ["2024-02,apple,1,1,0,1,0,0,1.000000,0.000000,456.00"])
    }

    /// Google resubscribe after expiry is a new token without a link, so a new subscription: `new`, not
    /// reactivated. Apple's resubscribe keeps the original_transaction_id: `reactivated`.
    @Test func resubscribeAfterExpiry() throws {
        let first = SubscriptionHistory(platform: .google, id: "tokenA", periods: [
            paid("GPA.A", "monthly", utc(2024, 1, 1), utc(2024, 2, 1), reason: .voluntary),
        ])
        let second = SubscriptionHistory(platform: .google, id: "tokenB", periods: [
            paid("GPA.B", "monthly", utc(2024, 3, 10), utc(2024, 4, 10)),
        ])
        let apple = SubscriptionHistory(platform: .apple, id: "otid", periods: [
            paid("1", "monthly", utc(2024, 1, 1), utc(2024, 2, 1), reason: .voluntary),
            paid("2", "monthly", utc(2024, 3, 10), utc(2024, 4, 10)),
        ])
        let result = try tables([first, second, apple], asOf: utc(2024, 3, 31))
        #expect(result.subscriptionRow("2024-03", "google", "all").map(line)
                == "2024-03,google,all,0,1,0,0,0,0,0,0,0,0,0,1,,,0")
        #expect(result.subscriptionRow("2024-03", "apple", "all").map(line)
                == "2024-03,apple,all,0,0,1,0,0,0,0,0,0,0,0,1,,,0")
    }

    /// A Google pause from 02-10 to 04-10: paused churn in February, nothing in March, reactivated in April.
    @Test func pauseAcrossTwoMonths() throws {
        let history = SubscriptionHistory(platform: .google, id: "p", periods: [
            paid("GPA.p", "monthly", utc(2024, 1, 10), utc(2024, 2, 10), reason: .paused),
            paid("GPA.p..1", "monthly", utc(2024, 4, 10), utc(2024, 5, 10)),
        ])
        let result = try tables([history], asOf: utc(2024, 4, 30))
        #expect(result.subscriptions(platform: "google", product: "monthly") == [
            "2024-01,google,monthly,0,1,0,0,0,0,0,0,0,0,0,1,,,0",
            "2024-02,google,monthly,1,0,0,0,0,1,0,0,0,1,0,0,1.000000,1.000000,0",
            "2024-03,google,monthly,0,0,0,0,0,0,0,0,0,0,0,0,,,0",
            "2024-04,google,monthly,0,0,1,0,0,0,0,0,0,0,0,1,,,0",
        ])
    }

    /// In Asia/Tokyo (UTC+9) 2024-01-31T20:00Z is 02-01 05:00: the subscription starts in February there, and
    /// its charge is February revenue.
    @Test func monthsInReportingTimeZone() throws {
        let history = SubscriptionHistory(platform: .apple, id: "t", periods: [
            paid("1", "monthly", utc(2024, 1, 31, 20), utc(2024, 2, 29, 20), price: 4_990_000),
        ])
        let tokyo = try tables([history], asOf: utc(2024, 2, 15), timeZone: "Asia/Tokyo")
        #expect(tokyo.subscriptions(platform: "all", product: "all") == ["2024-02,all,all,0,1,0,0,0,0,0,0,0,0,0,1,,,0"])
        #expect(tokyo.revenueMonthly.map(\.month) == ["2024-02"])
        let utcTables = try tables([history], asOf: utc(2024, 2, 15))
        #expect(utcTables.subscriptions(platform: "all", product: "all").first == "2024-01,all,all,0,1,0,0,0,0,0,0,0,0,0,1,,,0")
        #expect(utcTables.revenueMonthly.map(\.month) == ["2024-01", "2024-02"])
    }

    /// New York is UTC−4 in October (EDT): 2024-11-01T03:30Z is still October 31 there; one hour later is
    /// November. A period that ends at New York's month boundary counts as active at the end of October.
    @Test func monthsInATimeZoneWithDaylightSaving() throws {
        let october = SubscriptionHistory(platform: .google, id: "o", periods: [
            paid("GPA.o", "monthly", utc(2024, 11, 1, 3, 30), utc(2024, 12, 1, 5)),
        ])
        let november = SubscriptionHistory(platform: .google, id: "n", periods: [
            paid("GPA.n", "monthly", utc(2024, 11, 1, 4, 30), utc(2024, 12, 1, 5)),
        ])
        let result = try tables([october, november], asOf: utc(2024, 12, 1, 5), timeZone: "America/New_York")
        #expect(result.subscriptions(platform: "google", product: "all") == [
            "2024-10,google,all,0,1,0,0,0,0,0,0,0,0,0,1,,,0",
            "2024-11,google,all,1,1,0,0,0,0,0,0,0,0,0,2,0.000000,0.000000,0",
            "2024-12,google,all,2,0,0,0,0,2,0,0,0,0,2,0,1.000000,1.000000,0",
        ])
    }

    /// An as-of inside a period: the month is reported up to as-of, and a refund, a recovery and a renewal
    /// after as-of do not exist yet (the episode is open, the subscription still in grace).
    @Test func asOfInTheMiddleOfAPeriod() throws {
        let history = SubscriptionHistory(platform: .apple, id: "m", periods: [
            paid("1", "monthly", utc(2024, 2, 10), utc(2024, 3, 10), price: 2_000_000, reason: .billingIssue),
            paid("2", "monthly", utc(2024, 3, 14), utc(2024, 4, 10), price: 2_000_000, revokedAt: utc(2024, 3, 20)),
        ], episodes: [
            BillingEpisode(failedAt: utc(2024, 3, 10), graceEnd: utc(2024, 3, 26), outcome: .recovered(at: utc(2024, 3, 14))),
        ])
        let result = try tables([history], asOf: utc(2024, 3, 12))
        #expect(result.subscriptions(platform: "apple", product: "all") == [
            "2024-02,apple,all,0,1,0,0,0,0,0,0,0,0,0,1,,,0",
            "2024-03,apple,all,1,0,0,0,0,0,0,0,0,0,0,1,0.000000,0.000000,0",
        ])
        #expect(result.graceRecovery.map(line) == ["2024-03,apple,1,1,0,0,0,1,,,"])
        #expect(result.revenueMonthly.map(line) == [
            "2024-02,apple,monthly,USD,2.00,0.00,2.00,1,0,0,2.00",
            "2024-03,apple,monthly,USD,0.00,0.00,0.00,0,0,0,2.00",
        ])
    }

    /// Trials: the state at month end, conversion through a billing-issue recovery at the trial's end,
    /// abandonment, and a trial still running at as-of (pending).
    @Test func trialStatesAndConversion() throws {
        let recovered = SubscriptionHistory(platform: .google, id: "a", periods: [
            trial("GPA.a", "monthly", utc(2024, 1, 25), utc(2024, 2, 1)),
            paid("GPA.a..0", "monthly", utc(2024, 2, 3), utc(2024, 3, 3)),
        ], episodes: [
            BillingEpisode(failedAt: utc(2024, 2, 1), graceEnd: utc(2024, 2, 4), outcome: .recovered(at: utc(2024, 2, 3))),
        ])
        let abandoned = SubscriptionHistory(platform: .google, id: "b", periods: [
            trial("GPA.b", "monthly", utc(2024, 1, 26), utc(2024, 2, 2), currency: nil),
        ])
        let pending = SubscriptionHistory(platform: .google, id: "c", periods: [
            trial("GPA.c", "monthly", utc(2024, 1, 31), utc(2024, 2, 14)),
        ])
        let result = try tables([recovered, abandoned, pending], asOf: utc(2024, 2, 10))
        #expect(result.trialConversion.map(line) == ["2024-01,google,monthly,3,1,1,1,0.500000"])
        #expect(result.subscriptions(platform: "google", product: "monthly") == [
            "2024-01,google,monthly,0,0,0,0,0,0,0,0,0,0,0,0,,,3",
            "2024-02,google,monthly,0,1,0,0,0,0,0,0,0,0,0,1,,,1",
        ])
    }

    /// A renewal charged before the trial's expiry (Apple renews ahead of `expires_date_ms`) converts the trial,
    /// as does one starting at its end; a paid period that started before the trial does not follow it.
    @Test func aTrialRenewedEarlyIsConverted() throws {
        let early = SubscriptionHistory(platform: .apple, id: "e", periods: [
            trial("1000000001", "monthly", utc(2024, 1, 10), utc(2024, 1, 17)),
            paid("1000000002", "monthly", utc(2024, 1, 17) - 2_000, utc(2024, 2, 17), price: 9_990_000),
        ])
        let ahead = SubscriptionHistory(platform: .apple, id: "h", periods: [
            trial("2000000001", "monthly", utc(2024, 1, 12), utc(2024, 1, 19)),
            paid("2000000002", "monthly", utc(2024, 1, 19) - 5 * hour, utc(2024, 2, 19), price: 9_990_000),
        ])
        let before = SubscriptionHistory(platform: .apple, id: "b", periods: [
            paid("3000000001", "monthly", utc(2023, 12, 1), utc(2024, 1, 1), price: 9_990_000),
            trial("3000000002", "monthly", utc(2024, 1, 15), utc(2024, 1, 22)),
        ])
        let result = try tables([early, ahead, before], asOf: utc(2024, 2, 10))
        #expect(result.trialConversion.map(line) == ["2024-01,apple,monthly,3,2,1,0,0.666667"])
    }

    /// A trial renewed early across a month boundary: paid from the renewal, so at the end of January the
    /// subscription is active and not also an active trial (one state at each instant).
    @Test func anEarlyRenewalEndsTheTrialState() throws {
        let history = SubscriptionHistory(platform: .apple, id: "x", periods: [
            trial("4000000001", "monthly", utc(2024, 1, 25), utc(2024, 2, 1) + 5 * hour),
            paid("4000000002", "monthly", utc(2024, 2, 1) - hour, utc(2024, 3, 1), price: 9_990_000),
        ])
        let result = try tables([history], asOf: utc(2024, 2, 10))
        let january = try #require(result.subscriptionRow("2024-01", "apple", "all"))
        #expect(january.activeEnd == 1 && january.activeTrialsEnd == 0)
    }

    /// A monthly period an upgrade cut short after two weeks keeps the duration it was sold with when no price
    /// list names one: January's MRR is its price (not x 30 / 14 days), February's movement the change to the
    /// yearly price, and its retention cohort P1M.
    @Test func anUpgradedPeriodKeepsTheDurationItWasSoldWith() throws {
        var monthly = paid("GPA.1", "monthly", utc(2024, 1, 20), utc(2024, 2, 20), price: 9_990_000)
        monthly.end(replacedAt: utc(2024, 2, 3))
        monthly.endReason = .replaced
        #expect(monthly.end == utc(2024, 2, 3) && monthly.scheduledEnd == utc(2024, 2, 20))
        let history = SubscriptionHistory(platform: .google, id: "u", periods: [
            monthly, paid("GPA.2", "yearly", utc(2024, 2, 3), utc(2025, 2, 3), price: 99_990_000),
        ])
        let result = try tables([history], asOf: utc(2024, 2, 29))
        #expect(result.revenueMonthly.filter { $0.productId == "monthly" }.map(line).first
                == "2024-01,google,monthly,USD,9.99,0.00,9.99,1,0,0,9.99")
        #expect(result.mrrMovements.map(line).contains("2024-02,google,USD,9.99,0.00,0.00,1.66,0.00,0.00,8.33,0,0,1,0,0"))
        #expect(result.retentionCohorts.map(line).allSatisfy { $0.hasPrefix("2024-01,google,P1M,") })
    }

    /// grace_recovery's median is the mean of the two middle values for an even count.
    @Test func medianOfAnEvenNumberOfRecoveries() throws {
        let histories = [(10, "x"), (21, "y"), (40, "z"), (3, "w")].map { hours, id in
            SubscriptionHistory(platform: .apple, id: id, periods: [
                paid("\(id)1", "monthly", utc(2024, 1, 1), utc(2024, 2, 1)),
                paid("\(id)2", "monthly", utc(2024, 2, 1) + Millis(hours) * hour, utc(2024, 3, 1)),
            ], episodes: [
                BillingEpisode(failedAt: utc(2024, 2, 1), graceEnd: utc(2024, 2, 2),
                               outcome: .recovered(at: utc(2024, 2, 1) + Millis(hours) * hour)),
            ])
        }
        let result = try tables(histories, asOf: utc(2024, 2, 29))
        #expect(result.graceRecovery.map(line) == ["2024-02,apple,4,4,3,1,0,0,1.000000,0.750000,15.50"])
        // Recovery inside grace keeps one spell; recovery after it is a gap and a reactivation.
        #expect(result.subscriptionRow("2024-02", "apple", "all").map(line)
                == "2024-02,apple,all,4,0,1,0,0,1,0,1,0,0,0,4,0.250000,0.000000,0")
    }

    /// Retention rows exist once the k-th renewal was due; monthly periods use calendar months.
    @Test func retentionRowExistenceAndCompleteness() throws {
        let history = SubscriptionHistory(platform: .google, id: "y", periods: [
            paid("GPA.y", "yearly", utc(2023, 1, 15), utc(2024, 1, 15), price: 59_990_000),
            paid("GPA.y..0", "yearly", utc(2024, 1, 15), utc(2025, 1, 15), price: 59_990_000),
        ])
        let result = try tables([history], asOf: utc(2024, 2, 1))
        #expect(result.retentionCohorts.map(line) == [
            "2023-01,google,P1Y,1,0,1,1.000000,true",
            "2023-01,google,P1Y,1,1,1,1.000000,false",
        ])
        // MRR of a yearly price is a twelfth: 59.99 / 12 = 4.999166... → 5.00.
        #expect(result.revenueMonthly.last.map(line) == "2024-02,google,yearly,USD,0.00,0.00,0.00,0,0,0,5.00")
    }
}

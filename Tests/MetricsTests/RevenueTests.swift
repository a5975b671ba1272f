import Facts
import SubscriptionMetrics
import Testing

/// revenue_monthly: price resolution, prorated refunds, unpriced transactions, MRR normalisation, FX columns.
@Suite struct RevenueTests {
    /// Apple REFUND_PRORATED refunds price × revocationPercentage: 9.99 × 50% = 4.995 → 5.00 (half away from
    /// zero), kept exact until written; the net is the written gross less the written refunds, 4.99, so that
    /// `net = gross - refunds` holds in the file (in the reporting currency too).
    @Test func proratedRefund() throws {
        let history = SubscriptionHistory(platform: .apple, id: "r", periods: [
            paid("1", "monthly", utc(2024, 1, 5), utc(2024, 2, 5), price: 9_990_000, revokedAt: utc(2024, 1, 20), refunded: 50_000),
        ])
        let result = try tables([history], asOf: utc(2024, 1, 31))
        #expect(result.revenueMonthly.map(line) == ["2024-01,apple,monthly,USD,9.99,5.00,4.99,1,1,0,0.00"])
        #expect(result.revenueMonthly.first?.refunds == Money(micros: 4_995_000))
        #expect(result.subscriptionRow("2024-01", "apple", "monthly")?.churnedRefund == 1)
        let converted = try tables([history], asOf: utc(2024, 1, 31), currency: "EUR", fx: try FXRates(csv: """
            month,currency,rate_to_reporting_currency
            2024-01,USD,0.5
            """))
        // 9.99 × 0.5 = 4.995 → 5.00; 4.995 × 0.5 = 2.4975 → 2.50; net 5.00 - 2.50.
        #expect(converted.revenueMonthly.map(line) == ["2024-01,apple,monthly,USD,9.99,5.00,4.99,1,1,0,0.00,5.00,2.50,2.50,0.00"])
    }

    /// A refund an Apple REFUND_REVERSED undid stands in a report as of any time before the reversal, and is gone
    /// from one as of the reversal or later: as-of cuts by event time. The same for a one-time purchase's refund.
    @Test func aReversedRefundStandsUntilItsReversal() throws {
        var period = paid("1", "monthly", utc(2024, 1, 5), utc(2024, 2, 5), price: 9_990_000, revokedAt: utc(2024, 1, 20))
        period.revocationReversedAt = utc(2024, 2, 2)
        let purchase = OneTimePurchase(id: "9", productId: "coins", purchasedAt: utc(2024, 1, 6), priceMicros: 1_990_000,
                                       currency: "USD", refunds: [OneTimePurchase.Refund(at: utc(2024, 1, 21), reversedAt: utc(2024, 2, 2))])
        let histories = [SubscriptionHistory(platform: .apple, id: "r", periods: [period]),
                         SubscriptionHistory(platform: .apple, id: "9", periods: [], purchases: [purchase])]
        let before = try tables(histories, asOf: utc(2024, 1, 31))
        #expect(before.revenueMonthly.map(line) == ["2024-01,apple,coins,USD,1.99,1.99,0.00,1,1,0,0.00",
                                                    "2024-01,apple,monthly,USD,9.99,9.99,0.00,1,1,0,0.00"])
        #expect(before.subscriptionRow("2024-01", "apple", "monthly")?.churnedRefund == 1)
        let after = try tables(histories, asOf: utc(2024, 2, 29))
        #expect(after.revenueMonthly.filter { $0.month == "2024-01" }.map(line) == ["2024-01,apple,coins,USD,1.99,0.00,1.99,1,0,0,0.00",
                                                                                 "2024-01,apple,monthly,USD,9.99,0.00,9.99,1,0,0,9.99"])
        #expect(after.subscriptionRow("2024-01", "apple", "monthly")?.churnedRefund == 0)
    }

    /// A legacy Apple transaction with no price: the price list fills it when the currency is known (from the
    /// period or another record of the subscription); with no currency, or no listed price, it is unpriced:
    /// counted in transactions and unpriced_transactions, never in gross or MRR.
    @Test func priceListAndUnpriced() throws {
        let prices = try PriceList(csv: """
            platform,product_id,currency,price,duration
            apple,monthly,EUR,5.49,P1M
            """)
        let listed = SubscriptionHistory(platform: .apple, id: "a", periods: [
            paid("1", "monthly", utc(2024, 1, 5), utc(2024, 2, 5), currency: nil),
        ], currencies: ["EUR"])
        let noCurrency = SubscriptionHistory(platform: .apple, id: "b", periods: [
            paid("2", "monthly", utc(2024, 1, 6), utc(2024, 2, 6), currency: nil),
        ])
        let notListed = SubscriptionHistory(platform: .apple, id: "c", periods: [
            paid("3", "monthly", utc(2024, 1, 7), utc(2024, 2, 7), currency: "GBP"),
        ])
        let result = try tables([listed, noCurrency, notListed], asOf: utc(2024, 1, 31), prices: prices)
        #expect(result.revenueMonthly.map(line) == [
            "2024-01,apple,monthly,,0.00,0.00,0.00,1,0,1,0.00",
            "2024-01,apple,monthly,EUR,5.49,0.00,5.49,1,0,0,5.49",
            "2024-01,apple,monthly,GBP,0.00,0.00,0.00,1,0,1,0.00",
        ])
    }

    /// A period of an introductory (or unstated) offer whose payloads state no price counts at the list price, as
    /// metrics.md prices legacy payloads, and is counted as such per product: the report warns that gross and MRR
    /// overstate there. One with a stated price, a free trial, an unpriced one and a plain renewal are not counted.
    @Test func offersPricedFromTheListAreCounted() throws {
        let prices = try PriceList(csv: """
            platform,product_id,currency,price,duration
            apple,monthly,USD,9.99,P1M
            """)
        var intro = paid("1", "monthly", utc(2024, 1, 5), utc(2024, 2, 5))
        intro.isIntroductory = true
        var statedIntro = paid("4", "monthly", utc(2024, 1, 7), utc(2024, 2, 7), price: 2_990_000)
        statedIntro.isIntroductory = true
        var unpricedIntro = paid("5", "monthly", utc(2024, 1, 8), utc(2024, 2, 8), currency: "GBP")
        unpricedIntro.isIntroductory = true
        let histories = [
            SubscriptionHistory(platform: .apple, id: "a", periods: [intro, paid("2", "monthly", utc(2024, 2, 5), utc(2024, 3, 5))]),
            SubscriptionHistory(platform: .apple, id: "b", periods: [trial("3", "monthly", utc(2024, 1, 6), utc(2024, 1, 13))]),
            SubscriptionHistory(platform: .apple, id: "c", periods: [statedIntro]),
            SubscriptionHistory(platform: .apple, id: "d", periods: [unpricedIntro]),
        ]
        let result = try tables(histories, asOf: utc(2024, 2, 29), prices: prices)
        #expect(result.revenueMonthly.map { "\($0.month) \($0.currency) \($0.listPricedOffers)" }
                == ["2024-01 GBP 0", "2024-01 USD 1", "2024-02 USD 0"])
        #expect(result.listPricedOffers == 1)
        #expect(result.listPricedOfferProducts == [ProductCount(platform: .apple, productId: "monthly", transactions: 1)])
        #expect(result.unpricedProducts == [ProductCount(platform: .apple, productId: "monthly", transactions: 1)])
        // Without a price list the offer is unpriced, not priced from the list.
        #expect(try tables(histories, asOf: utc(2024, 2, 29)).listPricedOffers == 0)
    }

    /// A period counted as paid though no payload showed a payment (a Google first order seen only once expired)
    /// is counted per product for the report's warning; it is a transaction like any other.
    @Test func periodsAssumedPaidAreCounted() throws {
        var assumed = paid("GPA.1", "monthly", utc(2024, 1, 5), utc(2024, 2, 5), price: 4_990_000)
        assumed.isAssumedPaid = true
        let histories = [
            SubscriptionHistory(platform: .google, id: "a", periods: [assumed]),
            SubscriptionHistory(platform: .google, id: "b", periods: [paid("GPA.2", "monthly", utc(2024, 1, 6), utc(2024, 2, 6), price: 4_990_000)]),
        ]
        let result = try tables(histories, asOf: utc(2024, 2, 29))
        #expect(result.revenueMonthly.map { "\($0.month) \($0.transactions) \($0.assumedPaidPeriods) \($0.gross.text)" }
                == ["2024-01 2 1 9.98"])
        #expect(result.assumedPaidPeriods == 1)
        #expect(result.assumedPaidPeriodProducts == [ProductCount(platform: .google, productId: "monthly", transactions: 1)])

        // One a week long, of a product billed monthly: no paid first order is that short, so with the price list's
        // duration it is a free trial (abandoned), neither revenue nor an assumption; without it, still assumed.
        // A week cut short by a refund stays paid.
        var week = paid("GPA.3", "monthly", utc(2024, 1, 7), utc(2024, 1, 14), price: 4_990_000)
        week.isAssumedPaid = true
        var refunded = paid("GPA.4", "monthly", utc(2024, 1, 8), utc(2024, 2, 8), price: 4_990_000, revokedAt: utc(2024, 1, 15))
        refunded.isAssumedPaid = true
        let short = [SubscriptionHistory(platform: .google, id: "c", periods: [week]),
                     SubscriptionHistory(platform: .google, id: "d", periods: [refunded])]
        let listed = try tables(short, asOf: utc(2024, 2, 29), prices: try PriceList(csv: """
            platform,product_id,currency,price,duration
            google,monthly,USD,4.99,P1M
            """))
        #expect(listed.revenueMonthly.map { "\($0.month) \($0.transactions) \($0.assumedPaidPeriods)" } == ["2024-01 1 1"])
        #expect(listed.trialConversion.map { "\($0.cohortMonth) \($0.trials) \($0.abandoned)" } == ["2024-01 1 1"])
        #expect(try tables(short, asOf: utc(2024, 2, 29)).assumedPaidPeriods == 2)
        // Only a subscription's first period: a later token's first order (an upgrade's prorated one) may run short.
        var later = paid("GPA.6", "monthly", utc(2024, 1, 20), utc(2024, 1, 27), price: 4_990_000)
        later.isAssumedPaid = true
        let chain = SubscriptionHistory(platform: .google, id: "e", periods: [
            paid("GPA.5", "monthly", utc(2024, 1, 1), utc(2024, 1, 20), price: 4_990_000, reason: .replaced), later,
        ])
        let chained = try tables([chain], asOf: utc(2024, 2, 29), prices: try PriceList(csv: """
            platform,product_id,currency,price,duration
            google,monthly,USD,4.99,P1M
            """))
        #expect(chained.assumedPaidPeriods == 1 && chained.trialConversion.isEmpty)

        // Without a price list, the order that renewed it gives the billing period when a resource showed it and it
        // ran a whole billing duration as sold (before a deferral): a week before a month is a trial that
        // converted. Not a renewal filled in (its length is inferred), of another product, itself unproven, of an
        // odd length, or not started by the as-of time.
        var first = paid("GPA.7", "monthly", utc(2024, 3, 1), utc(2024, 3, 8), price: 4_990_000)
        first.isAssumedPaid = true
        let renewed = SubscriptionHistory(platform: .google, id: "f", periods: [
            first, paid("GPA.7..0", "monthly", utc(2024, 3, 8), utc(2024, 4, 8), price: 4_990_000),
        ])
        let converted = try tables([renewed], asOf: utc(2024, 3, 31))
        #expect(converted.assumedPaidPeriods == 0)
        #expect(converted.trialConversion.map { "\($0.cohortMonth) \($0.trials) \($0.converted)" } == ["2024-03 1 1"])
        #expect(converted.revenueMonthly.map { "\($0.month) \($0.transactions) \($0.gross.text)" } == ["2024-03 1 4.99"])
        var deferred = renewed
        deferred.periods[1].scheduledEnd = utc(2024, 4, 8)
        deferred.periods[1].end = utc(2024, 5, 8)
        #expect(try tables([deferred], asOf: utc(2024, 3, 31)).assumedPaidPeriods == 0)
        #expect(try tables([renewed], asOf: utc(2024, 3, 7)).assumedPaidPeriods == 1)
        // A renewal filled in (no resource showed it; its length is inferred) is passed over for the shown one after it.
        var filledIn = renewed
        filledIn.periods[1].isFilledIn = true
        filledIn.periods.append(paid("GPA.7..1", "monthly", utc(2024, 4, 8), utc(2024, 5, 8), price: 4_990_000))
        #expect(try tables([filledIn], asOf: utc(2024, 4, 30)).trialConversion.map { "\($0.trials) \($0.converted)" } == ["1 1"])
        #expect(try tables([filledIn], asOf: utc(2024, 3, 31)).assumedPaidPeriods == 1)
        for change in [{ (p: inout Period) in p.isFilledIn = true }, { $0.productId = "yearly" }, { $0.isAssumedPaid = true },
                       { $0.end = utc(2024, 3, 28) }] as [(inout Period) -> Void] {
            var other = renewed
            change(&other.periods[1])
            #expect(try tables([other], asOf: utc(2024, 3, 31)).trialConversion.isEmpty)
        }
    }

    /// A Google proration period (an upgrade's credit turned into time on the new plan) states no charge: it is an
    /// unpriced transaction, which no price list prices, and is counted as a proration for the warning; its MRR
    /// runs at the new plan's recurring price, so the upgrade is no churn, and the renewal after it is priced.
    /// A refund of it refunds nothing known.
    @Test func prorationPeriodsAreUnpricedButKeepTheirMRR() throws {
        let prices = try PriceList(csv: """
            platform,product_id,currency,price,duration
            google,basic,USD,4.99,P1M
            google,premium,USD,9.99,P1M
            """)
        var credit = paid("GPA.7", "premium", utc(2024, 1, 20), utc(2024, 2, 28), price: 9_990_000)
        credit.isProration = true
        let upgrade = SubscriptionHistory(platform: .google, id: "u", periods: [
            paid("GPA.5", "basic", utc(2024, 1, 1), utc(2024, 1, 20), price: 4_990_000, reason: .replaced), credit,
            paid("GPA.7..0", "premium", utc(2024, 2, 28), utc(2024, 3, 28), price: 9_990_000),
        ])
        let result = try tables([upgrade], asOf: utc(2024, 2, 29), prices: prices)
        #expect(result.revenueMonthly.map(line) == [
            "2024-01,google,basic,USD,4.99,0.00,4.99,1,0,0,0.00",
            "2024-01,google,premium,USD,0.00,0.00,0.00,1,0,1,9.99",
            "2024-02,google,premium,USD,9.99,0.00,9.99,1,0,0,9.99",
        ])
        #expect(result.prorationPeriods == 1 && result.unpricedTransactions == 1)
        #expect(result.prorationPeriodProducts == [ProductCount(platform: .google, productId: "premium", transactions: 1)])
        #expect(result.listPricedOffers == 0)
        #expect(result.subscriptionRow("2024-01", "google", "all")?.churned == 0)

        var refunded = credit
        refunded.revokedAt = utc(2024, 2, 3)
        let revoked = SubscriptionHistory(platform: .google, id: "r", periods: [refunded])
        #expect(try tables([revoked], asOf: utc(2024, 2, 29), prices: prices).revenueMonthly.map(line) == [
            "2024-01,google,premium,USD,0.00,0.00,0.00,1,0,1,9.99",
            "2024-02,google,premium,USD,0.00,0.00,0.00,0,1,0,0.00",
        ])
    }

    /// Without a price list, a proration period's MRR takes a billing term, not its own length (the credit's worth
    /// of time): the term a renewal of its plan ran, once one started by the as-of time, else the term of the plan
    /// it replaced. An add-on added on the 15th (base 9.99 and add-on 2.99 aligned until the 1st) is an expansion
    /// of 2.99, not 12.98 × 30 / 17.
    @Test func aProrationPeriodsMRRRunsOverABillingTerm() throws {
        /// A change of plan: `old` replaced at the start of `credit`, a proration period.
        func change(_ old: Period, _ credit: Period) -> [Period] {
            var (replaced, proration) = (old, credit)
            replaced.end(replacedAt: credit.start)
            replaced.endReason = .replaced
            proration.isProration = true
            return [replaced, proration]
        }
        let upgrade = change(paid("GPA.8..0", "basic", utc(2026, 3, 1), utc(2026, 4, 1), price: 9_990_000),
                             paid("GPA.9", "music", utc(2026, 3, 15), utc(2026, 4, 1), price: 12_980_000))
        let history = SubscriptionHistory(platform: .google, id: "a", periods: [
            paid("GPA.8", "basic", utc(2026, 2, 1), utc(2026, 3, 1), price: 9_990_000)] + upgrade + [
            paid("GPA.9..0", "music", utc(2026, 4, 1), utc(2026, 5, 1), price: 12_980_000),
        ])
        // As of March 31 the renewal has not started: the replaced plan's month; as of April 20, the renewal's.
        for asOf in [utc(2026, 3, 31), utc(2026, 4, 20)] {
            let march = try tables([history], asOf: asOf).revenueMonthly.first { $0.month == "2026-03" && $0.productId == "music" }
            #expect(march.map(line) == "2026-03,google,music,USD,0.00,0.00,0.00,1,0,1,12.98", "as of \(asOf)")
        }
        // A crossgrade to another base plan of the same product (monthly to annual): the renewal after the credit
        // names its term, not the monthly period before it.
        let crossgrade = SubscriptionHistory(platform: .google, id: "c", periods: change(
            paid("GPA.20..0", "premium", utc(2026, 2, 1), utc(2026, 3, 1), price: 9_990_000),
            paid("GPA.21", "premium", utc(2026, 2, 25), utc(2026, 3, 5), price: 99_990_000)) + [
            paid("GPA.21..0", "premium", utc(2026, 3, 5), utc(2027, 3, 5), price: 99_990_000),
        ])
        let february = try tables([crossgrade], asOf: utc(2026, 3, 31)).revenueMonthly.first { $0.month == "2026-02" }
        #expect(february.map(line) == "2026-02,google,premium,USD,9.99,0.00,9.99,2,0,1,8.33")
        // Alone, with nothing to take a term from, it runs over its own 17 days.
        let alone = SubscriptionHistory(platform: .google, id: "b", periods: [upgrade[1]])
        #expect(try tables([alone], asOf: utc(2026, 3, 31)).revenueMonthly.map(line) == ["2026-03,google,music,USD,0.00,0.00,0.00,1,0,1,22.91"])
    }

    /// The first order after a Google change of plan that no payload marks as a proration (a v1 resource, a v2
    /// one without `offerPhase`) runs the credit's worth of time: 8 days on a monthly plan is no week, so its MRR
    /// takes the replaced plan's month. Charged in full, a whole year after a month is the year it was sold as.
    @Test func theFirstGoogleOrderAfterAChangeOfPlanRunsOverABillingTerm() throws {
        func upgrade(to product: String, _ end: Millis, price: Int64) -> SubscriptionHistory {
            var basic = paid("GPA.5", "basic", utc(2026, 1, 1), utc(2026, 2, 1), price: 4_990_000)
            basic.end(replacedAt: utc(2026, 1, 25))
            basic.endReason = .replaced
            return SubscriptionHistory(platform: .google, id: product, periods: [
                basic, paid("GPA.7", product, utc(2026, 1, 25), end, price: price),
            ])
        }
        let credited = try tables([upgrade(to: "premium", utc(2026, 2, 2), price: 9_990_000)], asOf: utc(2026, 1, 31))
        #expect(credited.revenueMonthly.first { $0.productId == "premium" }?.mrrEnd.text == "9.99")
        let annual = try tables([upgrade(to: "premium_annual", utc(2027, 1, 25), price: 99_990_000)], asOf: utc(2026, 1, 31))
        #expect(annual.revenueMonthly.first { $0.productId == "premium_annual" }?.mrrEnd.text == "8.33")
        // A deferred downgrade (the yearly period ran to its end): the month after it is a month of the new plan.
        var yearly = paid("GPA.3", "pro_yearly", utc(2024, 1, 1), utc(2025, 1, 1), price: 99_990_000)
        yearly.endReason = .replaced
        let deferred = SubscriptionHistory(platform: .google, id: "d", periods: [
            yearly, paid("GPA.4", "pro_monthly", utc(2025, 1, 1), utc(2025, 2, 1), price: 9_990_000),
        ])
        let downgraded = try tables([deferred], asOf: utc(2025, 1, 20))
        #expect(downgraded.revenueMonthly.first { $0.productId == "pro_monthly" }?.mrrEnd.text == "9.99")
    }

    /// An Apple upgrade bought during grace starts a whole period of its own (a year), which its MRR runs over;
    /// only a renewal of the product that failed keeps the old renewal date, its length counted from E.
    @Test func anUpgradeBoughtInGraceIsAWholePeriod() throws {
        var monthly = paid("m1", "monthly", utc(2024, 3, 5), utc(2024, 4, 5), price: 9_990_000)
        monthly.endReason = .billingIssue
        var history = SubscriptionHistory(platform: .apple, id: "g", periods: [
            monthly, paid("y1", "yearly", utc(2024, 4, 8), utc(2025, 4, 8), price: 49_990_000),
        ])
        history.episodes = [BillingEpisode(failedAt: utc(2024, 4, 5), graceEnd: utc(2024, 4, 21), outcome: .recovered(at: utc(2024, 4, 8)))]
        let result = try tables([history], asOf: utc(2024, 4, 30))
        #expect(result.revenueMonthly.first { $0.productId == "yearly" }?.mrrEnd.text == "4.17")
    }

    /// A Google order first fetched after its revocation shows the revocation as its expiry: revoked at its end,
    /// it is still a refund churn, not another reason's. A refund after a period's end ends nothing.
    @Test func aRevocationAtThePeriodsEndIsARefundChurn() throws {
        var cut = paid("GPA.1", "monthly", utc(2024, 12, 3), utc(2024, 12, 15), price: 5_490_000, revokedAt: utc(2024, 12, 15))
        cut.endReason = .developerCancel
        let result = try tables([SubscriptionHistory(platform: .google, id: "c", periods: [cut])], asOf: utc(2024, 12, 31))
        #expect(result.subscriptionRow("2024-12", "google", "monthly")?.churnedRefund == 1)
        let later = paid("GPA.2", "monthly", utc(2024, 11, 3), utc(2024, 12, 3), price: 5_490_000, revokedAt: utc(2024, 12, 10))
        let old = try tables([SubscriptionHistory(platform: .google, id: "o", periods: [later])], asOf: utc(2024, 12, 31))
        #expect(old.subscriptionRow("2024-12", "google", "monthly")?.churnedRefund == 0)
    }

    /// MRR per month: P1W ×4, P3M ÷3, P1Y ÷12, an odd 10-day period × 30/10; summed exactly before rounding.
    @Test func mrrMultipliers() throws {
        let prices = try PriceList(csv: """
            platform,product_id,currency,price,duration
            google,weekly,USD,1.99,P1W
            google,quarterly,USD,10.00,P3M
            google,yearly,USD,59.99,P1Y
            """)
        let start = utc(2024, 3, 1)
        let histories = [
            SubscriptionHistory(platform: .google, id: "w", periods: [paid("w", "weekly", start, start + 7 * day)]),
            SubscriptionHistory(platform: .google, id: "q", periods: [paid("q", "quarterly", start, utc(2024, 6, 1))]),
            SubscriptionHistory(platform: .google, id: "y1", periods: [paid("y1", "yearly", start, utc(2025, 3, 1))]),
            SubscriptionHistory(platform: .google, id: "y2", periods: [paid("y2", "yearly", start, utc(2025, 3, 1))]),
            SubscriptionHistory(platform: .google, id: "d", periods: [paid("d", "tenday", start, start + 10 * day, price: 1_000_000)]),
        ]
        let result = try tables(histories, asOf: utc(2024, 3, 5), prices: prices)
        #expect(result.revenueMonthly.map { "\($0.productId) \($0.mrrEnd.text)" } == [
            "quarterly 3.33", "tenday 3.00", "weekly 7.96", "yearly 10.00",
        ])
    }

    /// A paid offer sold for another length than its plan (Apple PAY_UP_FRONT: three months for 4.99 on a monthly
    /// plan) is normalised by its own length, with or without the price list: 4.99 / 3 = 1.66 a month. The
    /// renewal after it is at the plan's duration again, and a monthly offer (pay as you go) stays monthly.
    @Test func mrrOfAnOfferPaidUpFrontUsesItsOwnLength() throws {
        let prices = try PriceList(csv: """
            platform,product_id,currency,price,duration
            apple,monthly,USD,9.99,P1M
            """)
        var upFront = paid("1", "monthly", utc(2024, 1, 5), utc(2024, 4, 5), price: 4_990_000)
        upFront.isIntroductory = true
        var payAsYouGo = paid("3", "monthly", utc(2024, 1, 6), utc(2024, 2, 6), price: 1_990_000)
        payAsYouGo.isIntroductory = true
        let histories = [
            SubscriptionHistory(platform: .apple, id: "a", periods: [upFront, paid("2", "monthly", utc(2024, 4, 5), utc(2024, 5, 5))]),
            SubscriptionHistory(platform: .apple, id: "b", periods: [payAsYouGo]),
        ]
        for (listed, list) in [(true, prices), (false, .empty)] {
            let result = try tables(histories, asOf: utc(2024, 4, 30), prices: list)
            #expect(result.revenueMonthly.map { "\($0.month) \($0.mrrEnd.text)" }
                    == ["2024-01 3.65", "2024-02 1.66", "2024-03 1.66", "2024-04 \(listed ? "9.99" : "0.00")"])
        }
        // An offer's period a change cut short, the length it was sold for unknown: its ten days say nothing of
        // what its price buys, so the listed duration normalises it (1.99 a month, not three times that).
        var replaced = paid("5", "monthly", utc(2024, 1, 5), utc(2024, 1, 15), price: 1_990_000, reason: .replaced)
        replaced.isIntroductory = true
        let cut = try tables([SubscriptionHistory(platform: .apple, id: "c", periods: [replaced])], asOf: utc(2024, 1, 10), prices: prices)
        #expect(cut.revenueMonthly.map { "\($0.month) \($0.mrrEnd.text)" } == ["2024-01 1.99"])
        // An offer priced from the list is the listed duration's price, whatever its length (a week: 9.99, not ×4);
        // a stated one whose length is no whole billing duration (25 days: a billing issue moved its start) too.
        var listedWeek = paid("6", "monthly", utc(2024, 1, 5), utc(2024, 1, 12))
        listedWeek.isIntroductory = true
        var shifted = paid("7", "monthly", utc(2024, 1, 7), utc(2024, 2, 1), price: 1_990_000)
        shifted.isIntroductory = true
        let others = try tables([SubscriptionHistory(platform: .apple, id: "w", periods: [listedWeek]),
                                 SubscriptionHistory(platform: .apple, id: "s", periods: [shifted])], asOf: utc(2024, 1, 10), prices: prices)
        #expect(others.revenueMonthly.map { "\($0.month) \($0.mrrEnd.text)" } == ["2024-01 11.98"])
    }

    /// One product sold for several lengths (Google base plans of one subscription; Apple's monthly billing of a
    /// yearly commitment) has one row in the price list. A period whose payload states a price other than the
    /// list's is another plan: normalised by its own length when that is a whole billing duration, and a cohort
    /// takes that length. 9.99 monthly plus 99.99 yearly is 18.32 a month whichever plan the list names, and the
    /// yearly subscriber is in a P1Y cohort.
    @Test func aPlanSoldForAnotherLengthThanListedUsesItsOwn() throws {
        let histories = [
            SubscriptionHistory(platform: .google, id: "m", periods: [
                paid("m1", "premium", utc(2024, 1, 10), utc(2024, 2, 10), price: 9_990_000),
                paid("m2", "premium", utc(2024, 2, 10), utc(2024, 3, 10), price: 9_990_000),
            ]),
            SubscriptionHistory(platform: .google, id: "y", periods: [
                paid("y1", "premium", utc(2024, 1, 12), utc(2025, 1, 12), price: 99_990_000),
            ]),
        ]
        for listed in ["9.99,P1M", "99.99,P1Y"] {
            let prices = try PriceList(csv: "platform,product_id,currency,price,duration\ngoogle,premium,USD,\(listed)\n")
            let result = try tables(histories, asOf: utc(2024, 3, 5), prices: prices)
            #expect(result.revenueMonthly.map { "\($0.month) \($0.mrrEnd.text)" } == ["2024-01 18.32", "2024-02 18.32", "2024-03 18.32"])
            #expect(Set(result.retentionCohorts.map { "\($0.cohortMonth) \($0.duration) \($0.cohortSize)" })
                    == ["2024-01 P1M 1", "2024-01 P1Y 1"])
        }
    }

    /// A period at the listed price is the listed plan however long it ran: deferred by a month (60 days: not
    /// P2M), started late by a fetch after a pause (a week: not P1W). Nor is the first order after a change of
    /// plan a term of its own, though its price is another plan's: its eight days to the old renewal date are
    /// no week. Each counts its price over the listed duration.
    @Test func otherLengthsAtTheListedPriceKeepTheListedDuration() throws {
        let prices = try PriceList(csv: """
            platform,product_id,currency,price,duration
            google,premium,USD,9.99,P1M
            """)
        var monthly = paid("c1", "premium", utc(2024, 1, 1), utc(2024, 2, 1), price: 9_990_000, reason: .replaced)
        monthly.end(replacedAt: utc(2024, 1, 24))
        let histories = [
            SubscriptionHistory(platform: .google, id: "deferred", periods: [paid("d1", "premium", utc(2024, 1, 10), utc(2024, 3, 10), price: 9_990_000)]),
            SubscriptionHistory(platform: .google, id: "late", periods: [paid("l1", "premium", utc(2024, 1, 25), utc(2024, 2, 1), price: 9_990_000)]),
            SubscriptionHistory(platform: .google, id: "changed", periods: [
                monthly, paid("c2", "premium", utc(2024, 1, 24), utc(2024, 2, 1), price: 99_990_000),
            ]),
        ]
        let result = try tables(histories, asOf: utc(2024, 2, 2), prices: prices)
        // January: 9.99 + 9.99 + 99.99 (the changed plan's order, over the listed month); February the deferral.
        #expect(result.revenueMonthly.map { "\($0.month) \($0.mrrEnd.text)" } == ["2024-01 119.97", "2024-02 9.99"])
        #expect(Set(result.retentionCohorts.map(\.duration.description)) == ["P1M"])
    }

    /// A change of plan to a whole period of another base plan of the same product (a year of a product listed
    /// monthly): charged in full at an immediate change, or after a deferred one (the old period ran to its end),
    /// the new order is that plan's term, 99.99 a year, 8.33 a month, not 99.99 over the listed month.
    @Test func aChangeToAWholePeriodOfAnotherPlanTakesItsOwnTerm() throws {
        let prices = try PriceList(csv: """
            platform,product_id,currency,price,duration
            google,premium,USD,9.99,P1M
            """)
        var immediate = paid("i1", "premium", utc(2024, 1, 1), utc(2024, 2, 1), price: 9_990_000, reason: .replaced)
        immediate.end(replacedAt: utc(2024, 1, 24))
        let deferred = paid("d1", "premium", utc(2024, 1, 1), utc(2024, 2, 1), price: 9_990_000, reason: .replaced)
        let histories = [
            SubscriptionHistory(platform: .google, id: "immediate", periods: [
                immediate, paid("i2", "premium", utc(2024, 1, 24), utc(2025, 1, 24), price: 99_990_000),
            ]),
            SubscriptionHistory(platform: .google, id: "deferred", periods: [
                deferred, paid("d2", "premium", utc(2024, 2, 1), utc(2025, 2, 1), price: 99_990_000),
            ]),
        ]
        let result = try tables(histories, asOf: utc(2024, 2, 20), prices: prices)
        // January: the year (8.33) and the deferred subscriber's month still running (9.99); February: two years.
        #expect(result.revenueMonthly.map { "\($0.month) \($0.mrrEnd.text)" } == ["2024-01 18.32", "2024-02 16.67"])
    }

    /// One-time purchases count in revenue only (no subscription rows), refunds in full.
    @Test func oneTimePurchases() throws {
        let history = SubscriptionHistory(platform: .google, id: "coins", purchases: [
            OneTimePurchase(id: "GPA.c1", productId: "coins_100", purchasedAt: utc(2024, 1, 3), priceMicros: 990_000, currency: "USD"),
            OneTimePurchase(id: "GPA.c2", productId: "coins_100", purchasedAt: utc(2024, 1, 4), priceMicros: 990_000,
                            currency: "USD", refunds: [OneTimePurchase.Refund(at: utc(2024, 2, 2))]),
        ])
        let result = try tables([history], asOf: utc(2024, 2, 29))
        #expect(result.subscriptionsMonthly.isEmpty)
        #expect(result.revenueMonthly.map(line) == [
            "2024-01,google,coins_100,USD,1.98,0.00,1.98,2,0,0,0.00",
            "2024-02,google,coins_100,USD,0.00,0.99,-0.99,0,1,0,0.00",
        ])
        // Apple refunds part of a consumable's price by its use (`revocationPercentage` 25000 = 25 %).
        let partial = SubscriptionHistory(platform: .apple, id: "c", purchases: [
            OneTimePurchase(id: "c", productId: "coins_100", purchasedAt: utc(2024, 1, 3), priceMicros: 990_000, currency: "USD",
                            refunds: [OneTimePurchase.Refund(at: utc(2024, 1, 9), parts: 25_000, whole: 100_000)]),
        ])
        #expect(try tables([partial], asOf: utc(2024, 1, 31)).revenueMonthly.map(line) == [
            "2024-01,apple,coins_100,USD,0.99,0.25,0.74,1,1,0,0.00",
        ])
    }

    /// A consumable bought several at once: a listed price is a unit's, times the quantity; a stated price is
    /// already the whole purchase's. Refunds by quantity give back exact shares (1/7 of 7 × 0.99 is 0.99, not a
    /// rounded 14.285 %), each in its own month, and none after the as-of.
    @Test func quantitiesOfOneTimePurchases() throws {
        let prices = try PriceList(csv: """
            platform,product_id,currency,price,duration
            google,coins_100,USD,0.99,
            apple,coins_100,USD,0.99,
            """)
        let listed = SubscriptionHistory(platform: .google, id: "g", purchases: [
            OneTimePurchase(id: "GPA.q", productId: "coins_100", purchasedAt: utc(2024, 1, 3), currency: "USD", quantity: 7,
                            refunds: [OneTimePurchase.Refund(at: utc(2024, 1, 9), parts: 1, whole: 7),
                                      OneTimePurchase.Refund(at: utc(2024, 3, 9), parts: 2, whole: 7)]),
        ])
        let stated = SubscriptionHistory(platform: .apple, id: "a", purchases: [
            OneTimePurchase(id: "a", productId: "coins_100", purchasedAt: utc(2024, 1, 3), priceMicros: 2_970_000,
                            currency: "USD", quantity: 3),
        ])
        #expect(try tables([listed, stated], asOf: utc(2024, 3, 31), prices: prices).revenueMonthly.map(line) == [
            "2024-01,apple,coins_100,USD,2.97,0.00,2.97,1,0,0,0.00",
            "2024-01,google,coins_100,USD,6.93,0.99,5.94,1,1,0,0.00",
            "2024-03,google,coins_100,USD,0.00,1.98,-1.98,0,1,0,0.00",
        ])
        #expect(try tables([listed], asOf: utc(2024, 2, 29), prices: prices).revenueMonthly.map(line) == [
            "2024-01,google,coins_100,USD,6.93,0.99,5.94,1,1,0,0.00",
        ])
        // Two refunds of one purchase in one month: one refunded transaction, both amounts.
        let twice = SubscriptionHistory(platform: .google, id: "g2", purchases: [
            OneTimePurchase(id: "GPA.r", productId: "coins_100", purchasedAt: utc(2024, 1, 3), currency: "USD", quantity: 3,
                            refunds: [OneTimePurchase.Refund(at: utc(2024, 1, 10), parts: 1, whole: 3),
                                      OneTimePurchase.Refund(at: utc(2024, 1, 20), parts: 1, whole: 3)]),
        ])
        #expect(try tables([twice], asOf: utc(2024, 1, 31), prices: prices).revenueMonthly.map(line) == [
            "2024-01,google,coins_100,USD,2.97,1.98,0.99,1,1,0,0.00",
        ])
    }

    /// `--currency USD --fx-rates`: each amount × the month's rate of its currency, USD itself at 1, and empty
    /// cells where the file has no rate.
    @Test func convertedColumns() throws {
        let fx = try FXRates(csv: """
            month,currency,rate_to_reporting_currency
            2024-01,JPY,0.0067
            2024-02,JPY,0.0068
            """)
        let histories = [
            SubscriptionHistory(platform: .apple, id: "j", periods: [
                paid("j1", "monthly", utc(2024, 1, 10), utc(2024, 2, 10), currency: "JPY", price: 480_000_000),
            ]),
            SubscriptionHistory(platform: .apple, id: "u", periods: [
                paid("u1", "monthly", utc(2024, 1, 11), utc(2024, 2, 11), currency: "USD", price: 4_990_000,
                     revokedAt: utc(2024, 1, 20)),
            ]),
            SubscriptionHistory(platform: .apple, id: "e", periods: [
                paid("e1", "monthly", utc(2024, 1, 12), utc(2024, 2, 12), currency: "EUR", price: 5_490_000),
            ]),
        ]
        let result = try tables(histories, asOf: utc(2024, 1, 31), currency: "USD", fx: fx)
        #expect(result.revenueMonthly.map(line) == [
            "2024-01,apple,monthly,EUR,5.49,0.00,5.49,1,0,0,5.49,,,,",
            "2024-01,apple,monthly,JPY,480.00,0.00,480.00,1,0,0,480.00,3.22,0.00,3.22,3.22",
            "2024-01,apple,monthly,USD,4.99,4.99,0.00,1,1,0,0.00,4.99,4.99,0.00,0.00",
        ])
        #expect(result.texts[1].columns.suffix(4) == ["gross_converted", "refunds_converted", "net_converted", "mrr_end_converted"])
        #expect(result.missingExchangeRates == ["2024-01 EUR"])
        let plain = try tables(histories, asOf: utc(2024, 1, 31))
        #expect(plain.texts[1].columns.last == "mrr_end")
        #expect(plain.revenueMonthly.allSatisfy { $0.cells.count == 11 })
        #expect(plain.missingExchangeRates.isEmpty)
    }

    @Test func moneyRoundsHalfAwayFromZero() {
        #expect(Money(micros: 4_995_000).text == "5.00")
        #expect(Money(micros: -4_995_000).text == "-5.00")
        #expect(Money(micros: 4_994_999).text == "4.99")
        #expect(Money(micros: -10_000).text == "-0.01")
        #expect(Money(micros: -4_999).text == "0.00")
        #expect(Money(micros: 123_456_789_000_000).text == "123456789.00")
    }
}

/// Histories built from damaged payloads can carry absurd values: they must not crash the report.
@Suite struct AbsurdInputTests {
    @Test func extremeInstantsAndPricesDoNotCrash() throws {
        let history = SubscriptionHistory(platform: .apple, id: "z", periods: [
            paid("0", "weird", -Millis.max, Millis.max, price: Int64.max, revokedAt: utc(2024, 1, 2), refunded: Int64.max),
            paid("1", "weird", utc(2024, 1, 3), utc(2024, 1, 2), price: Int64.max),
            paid("2", "weird", utc(2024, 1, 4), utc(2024, 1, 30), currency: "USD", price: Int64.max),
            paid("3", "weird", utc(2024, 1, 5), utc(2024, 1, 31), currency: "USD", price: Int64.max),
        ], episodes: [
            BillingEpisode(failedAt: -Millis.max, graceEnd: Millis.max, outcome: .recovered(at: Millis.max)),
            BillingEpisode(failedAt: utc(2024, 1, 30), graceEnd: Millis.min, outcome: .lost(at: -Millis.max)),
        ], purchases: [
            OneTimePurchase(id: "p", productId: "x", purchasedAt: Millis.min, priceMicros: Int64.min, currency: "USD"),
        ])
        let result = try tables([history], asOf: utc(2024, 2, 1))
        #expect(!result.subscriptionsMonthly.isEmpty)
        #expect(result.revenueMonthly.contains { $0.month == "2024-01" && $0.productId == "weird" })
    }
}

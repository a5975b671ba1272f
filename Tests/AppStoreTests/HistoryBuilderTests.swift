import AppStore
import Facts
import Testing

/// The builder against examples.md's Apple subscriptions A and C, with facts as the translator writes them.
@Suite struct HistoryBuilderTests {
    static func fact(_ kind: Fact.Kind, _ subject: String, at: Millis, observed: Millis, ref: String? = nil,
                     detail: String? = nil, product: String? = nil, end: Millis? = nil, amount: Int64? = nil,
                     currency: String? = nil, flags: Fact.Flags = []) -> Fact {
        Fact(platform: .apple, subject: subject, kind: kind, at: at, observedAt: observed, ref: ref, detail: detail,
             productId: product, end: end, amountMicros: amount, currency: currency, flags: flags)
    }

    /// A: trial 01-10 → 01-17, paid to 02-17, renewal fails (grace to 03-04), recovered 02-20 08:00 with a period
    /// to 03-17, renewed to 04-17, auto-renew off 03-25.
    static var factsA: [Fact] {
        let p = "premium_monthly"
        return [
            fact(AppleFactKind.period, "A", at: ms("2024-01-10 10:00"), observed: ms("2024-01-10 10:00"), ref: "a1",
                 product: p, end: ms("2024-01-17 10:00"), currency: "JPY", flags: .trial),
            fact(AppleFactKind.period, "A", at: ms("2024-01-17 10:00"), observed: ms("2024-01-17 10:00"), ref: "a2",
                 product: p, end: ms("2024-02-17 10:00"), currency: "JPY"),
            fact(AppleFactKind.billingIssue, "A", at: ms("2024-02-17 10:00"), observed: ms("2024-02-17 10:01"),
                 detail: "DID_FAIL_TO_RENEW", end: ms("2024-03-04 10:00")),
            fact(AppleFactKind.renewalStatus, "A", at: ms("2024-02-17 10:01"), observed: ms("2024-02-17 10:01"), flags: .on),
            fact(AppleFactKind.period, "A", at: ms("2024-02-20 08:00"), observed: ms("2024-02-20 08:00"), ref: "a3",
                 product: p, end: ms("2024-03-17 10:00"), currency: "JPY"),
            fact(AppleFactKind.period, "A", at: ms("2024-03-17 10:00"), observed: ms("2024-03-17 10:00"), ref: "a4",
                 product: p, end: ms("2024-04-17 10:00"), currency: "JPY"),
            fact(AppleFactKind.renewalStatus, "A", at: ms("2024-03-25 00:00"), observed: ms("2024-03-25 00:00")),
            fact(AppleFactKind.expiry, "A", at: ms("2024-04-17 10:00"), observed: ms("2024-04-17 10:00"),
                 detail: "voluntary", end: ms("2024-04-17 10:00")),
        ]
    }

    /// C: weekly, 02-26 06:00 → 03-04 → 03-11; the renewal at 03-11 fails with no grace, no outcome seen.
    static var factsC: [Fact] {
        let p = "premium_weekly"
        return [
            fact(AppleFactKind.period, "C", at: ms("2024-02-26 06:00"), observed: ms("2024-02-26 06:00"), ref: "c1",
                 product: p, end: ms("2024-03-04 06:00"), amount: 1_990_000, currency: "USD"),
            fact(AppleFactKind.period, "C", at: ms("2024-03-04 06:00"), observed: ms("2024-03-04 06:00"), ref: "c2",
                 product: p, end: ms("2024-03-11 06:00"), amount: 1_990_000, currency: "USD"),
            fact(AppleFactKind.billingIssue, "C", at: ms("2024-03-11 06:00"), observed: ms("2024-03-11 06:05"),
                 detail: "DID_FAIL_TO_RENEW"),
        ]
    }

    @Test func subscriptionA() {
        let history = AppleHistoryBuilder().history(id: "A", facts: Self.factsA)
        let p = "premium_monthly"
        #expect(history.periods == [
            Period(id: "a1", productId: p, start: ms("2024-01-10 10:00"), end: ms("2024-01-17 10:00"), isTrial: true,
                   currency: "JPY"),
            Period(id: "a2", productId: p, start: ms("2024-01-17 10:00"), end: ms("2024-02-17 10:00"), currency: "JPY",
                   endReason: .billingIssue),
            Period(id: "a3", productId: p, start: ms("2024-02-20 08:00"), end: ms("2024-03-17 10:00"), currency: "JPY"),
            Period(id: "a4", productId: p, start: ms("2024-03-17 10:00"), end: ms("2024-04-17 10:00"), currency: "JPY",
                   endReason: .voluntary),
        ])
        #expect(history.episodes == [BillingEpisode(failedAt: ms("2024-02-17 10:00"), graceEnd: ms("2024-03-04 10:00"),
                                                    outcome: .recovered(at: ms("2024-02-20 08:00")))])
        #expect(history.currencies == ["JPY"])
        #expect(history.purchases.isEmpty)
    }

    @Test func subscriptionC() {
        let history = AppleHistoryBuilder().history(id: "C", facts: Self.factsC)
        #expect(history.periods.map(\.id) == ["c1", "c2"])
        #expect(history.periods.map(\.priceMicros) == [1_990_000, 1_990_000])
        #expect(history.periods.map(\.endReason) == [.unknown, .billingIssue])
        let e = ms("2024-03-11 06:00")
        // No expiry notice: lost at E + 60 days (2024-05-10 06:00), after the examples' as-of, so Metrics shows it open.
        #expect(history.episodes == [BillingEpisode(failedAt: e, graceEnd: e, outcome: .lost(at: ms("2024-05-10 06:00")))])
    }

    /// Receipts polled daily that missed a grace period: the renewal at 03-31 20:00 (E) is recovered at 04-01 03:00,
    /// and the new period still ends at 04-30 20:00, the renewal date kept, as only a recovery in grace keeps it. The
    /// episode is recovered in grace (its end the shortest of Apple's grace periods past the recovery), not a churn
    /// and a resubscribe; a new billing date (the same gap, the period running a month from its own start) is one.
    @Test func aRenewalDateKeptAcrossAGapIsARecoveryInGrace() {
        let p = "premium_monthly"
        func facts(nextEnd: String) -> [Fact] {
            [Self.fact(AppleFactKind.period, "G", at: ms("2024-02-29 20:00"), observed: ms("2024-03-01 06:00"), ref: "g1",
                  product: p, end: ms("2024-03-31 20:00"), amount: 9_990_000, currency: "USD"),
             Self.fact(AppleFactKind.renewalStatus, "G", at: ms("2024-03-31 06:00"), observed: ms("2024-03-31 06:00"), flags: .on),
             Self.fact(AppleFactKind.period, "G", at: ms("2024-04-01 03:00"), observed: ms("2024-04-01 06:00"), ref: "g2",
                  product: p, end: ms(nextEnd), amount: 9_990_000, currency: "USD")]
        }
        let kept = AppleHistoryBuilder().history(id: "G", facts: facts(nextEnd: "2024-04-30 20:00"))
        #expect(kept.episodes == [BillingEpisode(failedAt: ms("2024-03-31 20:00"), graceEnd: ms("2024-04-03 20:00"),
                                                 outcome: .recovered(at: ms("2024-04-01 03:00")))])
        #expect(kept.periods.first?.endReason == .billingIssue)
        let moved = AppleHistoryBuilder().history(id: "G", facts: facts(nextEnd: "2024-05-01 03:00"))
        #expect(moved.episodes.isEmpty)
        // Month ends clamp both readings to one day (01-28 + 1 month and 01-30 + 1 month are both 02-28): nothing tells.
        let clamped = [
            Self.fact(AppleFactKind.period, "H", at: ms("2022-12-28 10:00"), observed: ms("2022-12-28 10:00"), ref: "h1",
                      product: p, end: ms("2023-01-28 10:00"), amount: 9_990_000, currency: "USD"),
            Self.fact(AppleFactKind.period, "H", at: ms("2023-01-30 10:00"), observed: ms("2023-01-30 10:00"), ref: "h2",
                      product: p, end: ms("2023-02-28 10:00"), amount: 9_990_000, currency: "USD"),
        ]
        #expect(AppleHistoryBuilder().history(id: "H", facts: clamped).episodes.isEmpty)
    }

    /// A V1 DID_FAIL_TO_RENEW received at 08-25 00:04 whose receipt lacked the renewal of 07-25: it states the failure
    /// at 07-25, but the archive shows that renewal, on time, over by the notice: the renewal that failed is 08-25's.
    @Test func aFailureStatedAtARenewalTheArchiveShowsIsTheNextOne() {
        let p = "premium_monthly"
        let facts = [
            Self.fact(AppleFactKind.period, "F", at: ms("2021-06-25 10:00"), observed: ms("2021-06-25 10:01"), ref: "f1",
                      product: p, end: ms("2021-07-25 10:00"), amount: 9_990_000, currency: "USD"),
            Self.fact(AppleFactKind.period, "F", at: ms("2021-07-25 10:00"), observed: ms("2021-07-25 10:01"), ref: "f2",
                      product: p, end: ms("2021-08-25 10:00"), amount: 9_990_000, currency: "USD"),
            Self.fact(AppleFactKind.billingIssue, "F", at: ms("2021-07-25 10:00"), observed: ms("2021-08-25 10:04"),
                      detail: "DID_FAIL_TO_RENEW", end: ms("2021-09-10 10:00")),
        ]
        let history = AppleHistoryBuilder().history(id: "F", facts: facts)
        #expect(history.episodes.map(\.failedAt) == [ms("2021-08-25 10:00")])
        #expect(history.episodes.map(\.graceEnd) == [ms("2021-09-10 10:00")])
        #expect(history.periods.map(\.endReason) == [.unknown, .billingIssue])
        // Logged by a backfill months later, the notice proves nothing of the kind: the failure stays where stated.
        var backfilled = facts
        backfilled[2].observedAt = ms("2021-12-01 00:00")
        #expect(AppleHistoryBuilder().history(id: "F", facts: backfilled).episodes.map(\.failedAt) == [ms("2021-07-25 10:00")])
    }

    @Test func shuffledFactsGiveTheSameHistory() {
        let facts = Self.factsA + Self.factsC.map { var f = $0; f.subject = "A"; return f }
        let expected = AppleHistoryBuilder().history(id: "A", facts: facts)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20 {
            #expect(AppleHistoryBuilder().history(id: "A", facts: facts.shuffled(using: &generator)) == expected)
        }
    }

    @Test func laterStatementsWinFieldByField() {
        let early = Self.fact(AppleFactKind.period, "S", at: 1000, observed: 1000, ref: "t", product: "p", end: 5000)
        let extended = Self.fact(AppleFactKind.period, "S", at: 1000, observed: 4000, ref: "t", product: "p", end: 9000,
                                 amount: 4_990_000, currency: "USD")
        let stale = Self.fact(AppleFactKind.period, "S", at: 1000, observed: 2000, ref: "t", product: "p", end: 5000)
        let history = AppleHistoryBuilder().history(id: "S", facts: [extended, stale, early])
        var expected = Period(id: "t", productId: "p", start: 1000, end: 9000, priceMicros: 4_990_000, currency: "USD")
        expected.scheduledEnd = 5000  // extended (RENEWAL_EXTENDED): its billing duration is still the one sold
        #expect(history.periods == [expected])
    }

    /// A price and its currency stay together: a later statement without a price (a receipt whose envelope says
    /// JPY) does not relabel a signed transaction's GBP price, in whichever order they come; with no price stated
    /// anywhere, the first envelope to carry the transaction names its currency (a receipt logged after the user
    /// moved storefront repeats the old transactions under the new currency).
    @Test func aPricedStatementsCurrencyIsNotOverriddenByAnEnvelopes() {
        let signed = Self.fact(AppleFactKind.period, "S", at: 1000, observed: 1000, ref: "t", product: "p", end: 5000,
                               amount: 8_990_000, currency: "GBP")
        let receipt = Self.fact(AppleFactKind.period, "S", at: 1000, observed: 3000, ref: "t", product: "p", end: 5000,
                                currency: "JPY")
        for facts in [[signed, receipt], [receipt, signed]] {
            let period = AppleHistoryBuilder().history(id: "S", facts: facts).periods
            #expect(period.map { "\($0.priceMicros ?? 0) \($0.currency ?? "")" } == ["8990000 GBP"])
        }
        let older = Self.fact(AppleFactKind.period, "S", at: 1000, observed: 500, ref: "t", product: "p", end: 5000, currency: "EUR")
        #expect(AppleHistoryBuilder().history(id: "S", facts: [receipt, older]).periods.map(\.currency) == ["EUR"])
    }

    /// An upgraded transaction refunded later is refunded (REFUND with `isUpgraded`); a revocation stated at the
    /// upgrade's own instant is that upgrade told without `is_upgraded`, and no refund.
    @Test func anUpgradedTransactionRefundedLaterIsRefunded() {
        let day: Millis = 86_400_000
        let old = Self.fact(AppleFactKind.period, "U", at: 0, observed: 0, ref: "u1", product: "monthly", end: 30 * day,
                            amount: 4_990_000, currency: "USD", flags: .upgraded)
        let upgrade = Self.fact(AppleFactKind.upgrade, "U", at: 10 * day, observed: 10 * day, ref: "u1")
        let new = Self.fact(AppleFactKind.period, "U", at: 10 * day, observed: 10 * day, ref: "u2", product: "yearly",
                            end: 375 * day, amount: 39_990_000, currency: "USD")
        func refund(at: Millis) -> Fact {
            Self.fact(AppleFactKind.revocation, "U", at: at, observed: at, ref: "u1", detail: "100000", product: "monthly")
        }
        let refunded = AppleHistoryBuilder().history(id: "U", facts: [old, upgrade, new, refund(at: 40 * day)]).periods
        #expect(refunded.map { "\($0.id) \($0.end / day) \($0.revokedAt.map { String($0 / day) } ?? "-")" } == ["u1 10 40", "u2 375 -"])
        for offset: Millis in [0, 400] {  // a receipt states whole seconds
            let told = AppleHistoryBuilder().history(id: "U", facts: [old, upgrade, new, refund(at: 10 * day + offset)]).periods
            #expect(told.map { "\($0.id) \($0.revokedAt.map { String($0 / day) } ?? "-")" } == ["u1 -", "u2 -"])
        }
    }

    @Test func refundReversedAfterRevocationRestoresThePeriod() {
        let period = Self.fact(AppleFactKind.period, "R", at: 1000, observed: 1000, ref: "t", product: "p", end: 9000)
        let refund = Self.fact(AppleFactKind.revocation, "R", at: 3000, observed: 3000, ref: "t", detail: "50000")
        let reversal = Self.fact(AppleFactKind.refundReversed, "R", at: 5000, observed: 5000, ref: "t")
        let revoked = AppleHistoryBuilder().history(id: "R", facts: [period, refund])
        #expect(revoked.periods.first?.revokedAt == 3000 && revoked.periods.first?.refundedPerHundredThousand == 50_000)
        // The refund stands until the reversal: a report as of 4000 sees it, one as of 5000 or later does not.
        let restored = AppleHistoryBuilder().history(id: "R", facts: [reversal, period, refund])
        #expect(restored.periods.first?.revokedAt == 3000 && restored.periods.first?.revocationReversedAt == 5000)
        let refundAgain = Self.fact(AppleFactKind.revocation, "R", at: 7000, observed: 7000, ref: "t")
        let again = AppleHistoryBuilder().history(id: "R", facts: [reversal, period, refund, refundAgain])
        #expect(again.periods.first?.revokedAt == 7000 && again.periods.first?.refundedPerHundredThousand == 100_000)
        #expect(again.periods.first?.revocationReversedAt == nil)
    }

    @Test func retryThenLossAtTheExpiredNotice() {
        let facts = [
            Self.fact(AppleFactKind.period, "L", at: 0, observed: 0, ref: "t1", product: "p", end: 10_000),
            Self.fact(AppleFactKind.billingIssue, "L", at: 10_000, observed: 10_500, detail: "DID_FAIL_TO_RENEW", end: 20_000),
            Self.fact(AppleFactKind.expiry, "L", at: 900_000, observed: 900_000, detail: "billing", end: 10_000),
        ]
        let history = AppleHistoryBuilder().history(id: "L", facts: facts)
        #expect(history.episodes == [BillingEpisode(failedAt: 10_000, graceEnd: 20_000, outcome: .lost(at: 900_000))])
        #expect(history.periods.first?.endReason == .billingIssue)
    }

    @Test func resubscribeAfterLossIsNotARecovery() {
        let day: Millis = 86_400_000
        let facts = [
            Self.fact(AppleFactKind.period, "X", at: 0, observed: 0, ref: "t1", product: "p", end: 30 * day),
            Self.fact(AppleFactKind.billingIssue, "X", at: 30 * day, observed: 30 * day, detail: "expiration_intent"),
            Self.fact(AppleFactKind.period, "X", at: 120 * day, observed: 120 * day, ref: "t2", product: "p", end: 150 * day),
        ]
        let history = AppleHistoryBuilder().history(id: "X", facts: facts)
        #expect(history.episodes == [BillingEpisode(failedAt: 30 * day, graceEnd: 30 * day, outcome: .lost(at: 90 * day))])
        #expect(history.periods.map(\.id) == ["t1", "t2"])
    }

    @Test func aLaterEpisodesNoticeDoesNotEndAnEarlierOne() {
        // The first episode (no notice seen) is lost at E + 60 days; the BILLING_RETRY expiry belongs to the second.
        let day: Millis = 86_400_000
        let facts = [
            Self.fact(AppleFactKind.period, "Y", at: 0, observed: 0, ref: "t1", product: "p", end: 30 * day),
            Self.fact(AppleFactKind.billingIssue, "Y", at: 30 * day, observed: 30 * day, detail: "expiration_intent"),
            Self.fact(AppleFactKind.period, "Y", at: 200 * day, observed: 200 * day, ref: "t2", product: "p", end: 230 * day),
            Self.fact(AppleFactKind.billingIssue, "Y", at: 230 * day, observed: 230 * day, detail: "DID_FAIL_TO_RENEW"),
            Self.fact(AppleFactKind.expiry, "Y", at: 250 * day, observed: 250 * day, detail: "billing", end: 230 * day),
        ]
        let history = AppleHistoryBuilder().history(id: "Y", facts: facts)
        #expect(history.episodes == [
            BillingEpisode(failedAt: 30 * day, graceEnd: 30 * day, outcome: .lost(at: 90 * day)),
            BillingEpisode(failedAt: 230 * day, graceEnd: 230 * day, outcome: .lost(at: 250 * day)),
        ])
    }

    /// A customer who turns auto-renew off during billing retry (or grace) ends it: Apple sends EXPIRED with
    /// subtype VOLUNTARY, its fact dated at the period's end. The episode is lost at that notice (its
    /// `signedDate`), not left open to E + 60 days, so a resubscription after it is no recovery.
    @Test func aVoluntaryExpiryDuringRetryLosesTheEpisode() {
        let day: Millis = 86_400_000
        let facts = [
            Self.fact(AppleFactKind.period, "V", at: 0, observed: 0, ref: "t1", product: "p", end: 30 * day),
            Self.fact(AppleFactKind.billingIssue, "V", at: 30 * day, observed: 30 * day, detail: "DID_FAIL_TO_RENEW",
                      end: 46 * day),
            Self.fact(AppleFactKind.expiry, "V", at: 30 * day, observed: 35 * day, detail: "voluntary", end: 30 * day),
            Self.fact(AppleFactKind.period, "V", at: 50 * day, observed: 50 * day, ref: "t2", product: "p", end: 80 * day),
        ]
        let history = AppleHistoryBuilder().history(id: "V", facts: facts)
        #expect(history.episodes == [BillingEpisode(failedAt: 30 * day, graceEnd: 46 * day, outcome: .lost(at: 35 * day))])
        // An expiry of another period (an earlier one, stated late) ends nothing here.
        let earlier = Self.fact(AppleFactKind.expiry, "V", at: 20 * day, observed: 33 * day, detail: "voluntary", end: 20 * day)
        let other = AppleHistoryBuilder().history(id: "V", facts: facts.filter { $0.kind != AppleFactKind.expiry } + [earlier])
        #expect(other.episodes == [BillingEpisode(failedAt: 30 * day, graceEnd: 46 * day, outcome: .recovered(at: 50 * day))])
    }

    @Test func anIntroductoryOfferOfUnstatedKindKeepsAStatedTrial() {
        // A receipt says trial; a signed transaction of 2022 (offerType 1, no offerDiscountType) restates it later.
        let receipt = Self.fact(AppleFactKind.period, "T", at: 0, observed: 100, ref: "t1", product: "p", end: 7_000, flags: .trial)
        let signed = Self.fact(AppleFactKind.period, "T", at: 0, observed: 200, ref: "t1", product: "p", end: 7_000,
                               flags: [.introductory, .inferred])
        let stated = AppleHistoryBuilder().history(id: "T", facts: [receipt, signed]).periods
        #expect(stated.map(\.isTrial) == [true] && stated.map(\.isIntroductory) == [false])
        // Alone, it counts as a paid introductory period, as metrics.md defines trials: priced from the list, and
        // counted as an offer priced so.
        let alone = AppleHistoryBuilder().history(id: "T", facts: [signed]).periods
        #expect(alone.map(\.isTrial) == [false] && alone.map(\.isIntroductory) == [true])
        // A receipt's introductory period (`is_in_intro_offer_period`) is one too, and stays one when restated.
        let receiptIntro = Self.fact(AppleFactKind.period, "T", at: 0, observed: 100, ref: "t1", product: "p", end: 7_000,
                                     flags: .introductory)
        #expect(AppleHistoryBuilder().history(id: "T", facts: [receiptIntro, signed]).periods.map(\.isIntroductory) == [true])
    }

    @Test func anExtendedPeriodUpgradedLaterIsBridgedToTheNewPlan() {
        // Sold to day 30, extended to day 37 (RENEWAL_EXTENDED), upgraded on day 33; the new plan starts 2 s later.
        let day: Millis = 86_400_000
        let facts = [
            Self.fact(AppleFactKind.period, "E", at: 0, observed: 0, ref: "t1", product: "m1", end: 30 * day),
            Self.fact(AppleFactKind.period, "E", at: 0, observed: 20 * day, ref: "t1", product: "m1", end: 37 * day),
            Self.fact(AppleFactKind.period, "E", at: 0, observed: 33 * day, ref: "t1", product: "m1", end: 37 * day,
                      flags: .upgraded),
            Self.fact(AppleFactKind.upgrade, "E", at: 33 * day, observed: 33 * day, ref: "t1"),
            Self.fact(AppleFactKind.period, "E", at: 33 * day + 2_000, observed: 33 * day, ref: "t2", product: "pro",
                      end: 63 * day),
        ]
        let history = AppleHistoryBuilder().history(id: "E", facts: facts)
        #expect(history.periods.map(\.end) == [33 * day + 2_000, 63 * day])
        #expect(history.periods.first?.scheduledEnd == 30 * day)
    }

    @Test func aPartialRefundOfAConsumable() {
        let facts = [
            Self.fact(AppleFactKind.oneTime, "c1", at: 500, observed: 600, ref: "c1", product: "coins", amount: 990_000, currency: "USD"),
            Self.fact(AppleFactKind.revocation, "c1", at: 900, observed: 900, ref: "c1", detail: "25000", product: "coins"),
        ]
        let purchases = AppleHistoryBuilder().history(id: "c1", facts: facts).purchases
        #expect(purchases.map(\.refunds) == [[OneTimePurchase.Refund(at: 900, parts: 25_000, whole: 100_000)]])
    }

    @Test func oneTimePurchasesAndTheirRefunds() {
        let facts = [
            Self.fact(AppleFactKind.oneTime, "o1", at: 500, observed: 600, ref: "o1", product: "coins", amount: 990_000,
                      currency: "EUR"),
            Self.fact(AppleFactKind.revocation, "o1", at: 800, observed: 900, ref: "o1", detail: "100000"),
        ]
        let history = AppleHistoryBuilder().history(id: "o1", facts: facts)
        #expect(history.periods.isEmpty)
        #expect(history.purchases == [OneTimePurchase(id: "o1", productId: "coins", purchasedAt: 500, priceMicros: 990_000,
                                                      currency: "EUR",
                                                      refunds: [OneTimePurchase.Refund(at: 800, parts: 100_000, whole: 100_000)])])
        #expect(history.currencies == ["EUR"])
    }
}

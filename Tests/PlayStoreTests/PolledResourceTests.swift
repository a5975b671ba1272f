import Facts
import Ingest
@testable import PlayStore
import Testing

private let builder = GoogleHistoryBuilder()
private let active = "SUBSCRIPTION_STATE_ACTIVE"

/// Google resources as a backend that polls them logs them: without the RTDN that dates each change, both APIs
/// (v1 and v2) for the same token, and states Google sets no time on.
struct PolledResourceTests {
    static let order = "GPA.3321-0000-0000-00211"

    /// A v1 body with `introductoryPriceInfo`: 0.99 USD for one monthly cycle.
    static func introductoryV1(start: Millis, expiry: Millis) -> String {
        let intro = #"{"introductoryPriceInfo":{"introductoryPriceCurrencyCode":"USD","introductoryPriceAmountMicros":"990000","#
            + #""introductoryPricePeriod":"P1M","introductoryPriceCycles":1},"#
        return intro + v1JSON(start: start, expiry: expiry, orderId: order, paymentState: 1, autoRenewing: true).dropFirst()
    }

    /// The first order bought at its introductory price, polled through both APIs: v1 states the offer's price,
    /// v2 before Google added `offerPhase` only the recurring one. The order cost 0.99 whichever fetch came first.
    @Test(arguments: [false, true])
    func theIntroductoryPriceAV1FetchShowsStays(v2First: Bool) throws {
        let start = ms("2024-01-10T10:00:00Z"), expiry = ms("2024-02-10T10:00:00Z")
        let v2 = v2JSON(state: active, start: "2024-01-10T10:00:00Z", expiry: "2024-02-10T10:00:00Z",
                        latestOrderId: Self.order, offerPhase: "")
        var archive = Archive()
        try archive.rtdn("tok-i", "premium_monthly", 4, at: start)
        if v2First {
            try archive.v2("tok-i", "premium_monthly", at: start + 3_600_000, v2)
            try archive.v1("tok-i", "premium_monthly", at: start + 86_400_000, Self.introductoryV1(start: start, expiry: expiry))
        } else {
            try archive.v1("tok-i", "premium_monthly", at: start + 3_600_000, Self.introductoryV1(start: start, expiry: expiry))
            try archive.v2("tok-i", "premium_monthly", at: start + 86_400_000, v2)
        }
        #expect(archive.failures.isEmpty)
        let periods = builder.history(id: "tok-i", facts: archive.facts).periods
        #expect(periods.map(\.priceMicros) == [990_000])
        #expect(periods.map(\.isIntroductory) == [true])
        #expect(periods.map(\.start) == [start])
    }

    /// After a free trial (v1 `paymentState` 2), the second of two introductory cycles (`..1`) fetched through v1
    /// (which reads it as past the cycles: the trial is no cycle) and v2 (an `introductoryPrice` phase, no price):
    /// the cycles move past the trial, so it cost 0.99, not the list price.
    @Test func aV2IntroductoryPhaseAfterATrialTakesTheStatedIntroductoryPrice() throws {
        let start = ms("2026-01-01T10:00:00Z")
        let intro = #"{"introductoryPriceInfo":{"introductoryPriceCurrencyCode":"USD","introductoryPriceAmountMicros":"990000","#
            + #""introductoryPricePeriod":"P1M","introductoryPriceCycles":2},"#
        var archive = Archive()
        try archive.v1("tok-ti", "premium_monthly", at: start, intro + v1JSON(
            start: start, expiry: ms("2026-01-08T10:00:00Z"), orderId: Self.order, paymentState: 2, autoRenewing: true).dropFirst())
        for (renewal, from, to) in [(0, "2026-01-08T10:00:00Z", "2026-02-08T10:00:00Z"), (1, "2026-02-08T10:00:00Z", "2026-03-08T10:00:00Z")] {
            try archive.v1("tok-ti", "premium_monthly", at: ms(from), intro + v1JSON(
                start: start, expiry: ms(to), orderId: Self.order + "..\(renewal)", paymentState: 1, autoRenewing: true).dropFirst())
            try archive.v2("tok-ti", "premium_monthly", at: ms(from) + 60_000, v2JSON(
                state: active, start: "2026-01-01T10:00:00Z", expiry: to, latestOrderId: Self.order + "..\(renewal)",
                offerPhase: #""introductoryPrice":{}"#))
        }
        let periods = builder.history(id: "tok-ti", facts: archive.facts).periods
        #expect(periods.map(\.priceMicros) == [0, 990_000, 990_000])
    }

    /// A v2 fetch with an `introductoryPrice` phase (no price: the recurring one is the base plan's) after one that
    /// stated only the recurring price: the order is introductory and unpriced, not charged 4.99.
    @Test func anIntroductoryPhaseUnpricesWhatTheRecurringPriceSaid() throws {
        let start = ms("2025-01-10T10:00:00Z")
        var archive = Archive()
        try archive.v2("tok-p", "premium_monthly", at: start + 3_600_000, v2JSON(
            state: active, start: "2025-01-10T10:00:00Z", expiry: "2025-02-10T10:00:00Z", latestOrderId: Self.order, offerPhase: ""))
        try archive.v2("tok-p", "premium_monthly", at: start + 86_400_000, v2JSON(
            state: active, start: "2025-01-10T10:00:00Z", expiry: "2025-02-10T10:00:00Z", latestOrderId: Self.order,
            offerPhase: #""introductoryPrice":{}"#))
        let periods = builder.history(id: "tok-p", facts: archive.facts).periods
        #expect(periods.map(\.priceMicros) == [nil])
        #expect(periods.map(\.isIntroductory) == [true])
    }

    /// Weekly polls and no RTDNs: the renewal fails on 03-10 10:00 (E), fetches on 03-11 and 03-18 show the
    /// account hold, the fetch on 03-27 the new order to 04-20 15:00. Recovering from hold starts a new billing date,
    /// so the subscription recovered one month before that expiry (03-20 15:00, 245 hours after E), not at the fetch.
    @Test(arguments: [1, 2])
    func aRecoveryFromHoldThatOnlyPollsShowIsDatedByTheNewBillingDate(version: Int) throws {
        let start = ms("2024-01-10T10:00:00Z"), e = ms("2024-03-10T10:00:00Z"), recovered = ms("2024-03-20T15:00:00Z")
        let expiry = ms("2024-04-20T15:00:00Z")
        func fetch(_ archive: inout Archive, at time: String, order: String, expiry: Millis, held: Bool) throws {
            if version == 1 {
                try archive.v1("tok-h", "premium_monthly", at: ms(time), v1JSON(start: start, expiry: expiry, orderId: order,
                                                                               paymentState: held ? 0 : 1, autoRenewing: true))
            } else {
                try archive.v2("tok-h", "premium_monthly", at: ms(time), v2JSON(
                    state: held ? "SUBSCRIPTION_STATE_ON_HOLD" : active, start: "2024-01-10T10:00:00Z",
                    expiry: Timestamp.rfc3339(expiry), latestOrderId: order))
            }
        }
        var archive = Archive()
        try fetch(&archive, at: "2024-01-11T02:00:00Z", order: Self.order, expiry: ms("2024-02-10T10:00:00Z"), held: false)
        try fetch(&archive, at: "2024-02-11T02:00:00Z", order: Self.order + "..0", expiry: e, held: false)
        try fetch(&archive, at: "2024-03-11T02:00:00Z", order: Self.order + "..1", expiry: e, held: true)
        try fetch(&archive, at: "2024-03-18T02:00:00Z", order: Self.order + "..1", expiry: e, held: true)
        try fetch(&archive, at: "2024-03-27T02:00:00Z", order: Self.order + "..1", expiry: expiry, held: false)
        #expect(archive.failures.isEmpty)
        let history = builder.history(id: "tok-h", facts: archive.facts)
        #expect(history.episodes.map(\.failedAt) == [e])
        #expect(history.episodes.map(\.outcome) == [.recovered(at: recovered)])
        #expect(history.periods.last.map { [$0.id, "\($0.start)", "\($0.end)"] } == [Self.order + "..1", "\(recovered)", "\(expiry)"])
    }

    /// The same recovery dated by a fetch that came before the billing date the order shows would put it: the
    /// restart is never before the last fetch that still showed the hold.
    @Test func aRecoveryIsNeverBeforeTheLastFetchShowingTheHold() throws {
        let start = ms("2024-01-10T10:00:00Z"), e = ms("2024-03-10T10:00:00Z"), lastHeld = ms("2024-03-21T02:00:00Z")
        var archive = Archive()
        try archive.poll("tok-h2", at: ms("2024-02-11T02:00:00Z"), start: start, renewal: 0, expiry: e)
        try archive.poll("tok-h2", at: lastHeld, start: start, renewal: 1, expiry: e, paid: false)
        try archive.poll("tok-h2", at: ms("2024-03-27T02:00:00Z"), start: start, renewal: 1, expiry: ms("2024-04-20T15:00:00Z"))
        let history = builder.history(id: "tok-h2", facts: archive.facts)
        // (`Archive` logs each fetch five seconds after the time given.)
        #expect(history.episodes.map(\.outcome) == [.recovered(at: lastHeld + 5_000)])
    }

    /// Monthly polls of a plan bought 01-25 10:00: `..0` paid to 03-25 10:00 (E), the renewal `..1` failed and polled in
    /// grace on 03-26 (access to `graceEnd`), then polled paid at `paidPollAt`, running to `paidUntil`.
    static func pollsAfterAFailedRenewal(_ token: String, graceEnd: Millis, paidPollAt: Millis,
                                         paidUntil: Millis) throws -> SubscriptionHistory {
        let start = ms("2024-01-25T10:00:00Z"), e = ms("2024-03-25T10:00:00Z")
        var archive = Archive()
        try archive.poll(token, at: ms("2024-02-26T02:00:00Z"), start: start, renewal: 0, expiry: e)
        try archive.poll(token, at: ms("2024-03-26T02:00:00Z"), start: start, renewal: 1, expiry: graceEnd, paid: false)
        try archive.poll(token, at: paidPollAt, start: start, renewal: 1, expiry: paidUntil)
        return builder.history(id: token, facts: archive.facts)
    }

    /// A poll in grace (the renewal at 03-25 10:00 failed, access to 03-28 10:00), then one after the grace showing
    /// the renewal paid and running to 04-25 10:00: the billing date was kept, as only a recovery in grace keeps it,
    /// so the subscription recovered before the grace ended (at the latest, just before), not at the poll.
    @Test func aRecoveryInGraceShownOnlyAfterTheGraceIsInGrace() throws {
        let e = ms("2024-03-25T10:00:00Z"), g = ms("2024-03-28T10:00:00Z")
        let history = try Self.pollsAfterAFailedRenewal("tok-g", graceEnd: g, paidPollAt: ms("2024-04-01T02:00:00Z"),
                                                        paidUntil: ms("2024-04-25T10:00:00Z"))
        #expect(history.episodes == [BillingEpisode(failedAt: e, graceEnd: g, outcome: .recovered(at: g - 1))])
        #expect(history.periods.map(\.start) == [ms("2024-02-25T10:00:00Z"), g - 1])
    }

    /// One poll in grace (G 04-01), none in the account hold after it, then the renewal paid from 04-25 on: the
    /// billing date moved, so it recovered from hold on 04-25 (738 hours after E), not in grace (two months back
    /// from the new expiry also reach E, but the plan renews monthly) and not at the poll.
    @Test func aGraceThatWentOnToAnUnseenHoldIsRecoveredAtTheNewBillingDate() throws {
        let e = ms("2024-03-25T10:00:00Z"), g = ms("2024-04-01T10:00:00Z")
        let history = try Self.pollsAfterAFailedRenewal("tok-gh", graceEnd: g, paidPollAt: ms("2024-05-01T02:00:00Z"),
                                                        paidUntil: ms("2024-05-25T10:00:00Z"))
        #expect(history.episodes == [BillingEpisode(failedAt: e, graceEnd: g, outcome: .recovered(at: ms("2024-04-25T10:00:00Z")))])
    }

    /// A deferred downgrade (the new token polled with `paymentState` 3) takes effect when the old order ends: no
    /// renewal of the old token is filled in up to the new token's first poll.
    @Test func aDeferredChangeFillsNoRenewalOfTheOldToken() throws {
        let start = ms("2024-01-10T10:00:00Z"), end = ms("2024-04-10T10:00:00Z")
        var archive = Archive()
        try archive.poll("tok-d1", at: ms("2024-03-11T02:00:00Z"), start: start, renewal: 1, expiry: end)
        try archive.v1("tok-d2", "basic_monthly", at: ms("2024-03-20T02:00:00Z"), v1JSON(
            start: ms("2024-03-20T01:00:00Z"), expiry: end, orderId: "GPA.3321-0000-0000-00777", paymentState: 3,
            autoRenewing: true, linked: "tok-d1", priceMicros: "2990000"))
        try archive.v1("tok-d2", "basic_monthly", at: ms("2024-04-15T02:00:00Z"), v1JSON(
            start: ms("2024-03-20T01:00:00Z"), expiry: ms("2024-05-10T10:00:00Z"), orderId: "GPA.3321-0000-0000-00777",
            paymentState: 1, autoRenewing: true, linked: "tok-d1", priceMicros: "2990000"))
        let periods = builder.history(id: "tok-d1", facts: archive.facts).periods
        #expect(periods.map(\.id) == [Self.order + "..1", "GPA.3321-0000-0000-00777"])
    }

    /// A v2 deferred downgrade: the new token (linked) lists the old plan with `deferredItemReplacement` and shows
    /// the old subscription's latest order until the change takes effect at its end. That order is the old
    /// token's: the new token's first charge is its own order, at the renewal, not a second 4.99 on the request day.
    @Test func aDeferredReplacementShowingTheOldOrderChargesNothingYet() throws {
        let start = ms("2026-02-03T10:00:00Z"), changeAt = ms("2026-04-03T10:00:00Z")
        var archive = Archive()
        try archive.v2("tok-o", "premium_monthly", at: ms("2026-03-03T10:00:00Z"), v2JSON(
            state: active, start: "2026-02-03T10:00:00Z", expiry: "2026-04-03T10:00:00Z", latestOrderId: Self.order + "..0"))
        let deferredItems = #""lineItems":[{"productId":"premium_monthly","expiryTime":"2026-04-03T10:00:00Z","#
            + #""autoRenewingPlan":{"autoRenewEnabled":false,"recurringPrice":{"currencyCode":"USD","units":"4","nanos":990000000}},"#
            + #""deferredItemReplacement":{"productId":"premium_lite"},"latestSuccessfulOrderId":"\#(Self.order)..0"},"#
            + #"{"productId":"premium_lite","autoRenewingPlan":{"autoRenewEnabled":true}}]"#
        try archive.v2("tok-n", "premium_monthly", at: ms("2026-03-12T10:00:00Z"), """
            {"kind":"androidpublisher#subscriptionPurchaseV2","startTime":"2026-03-12T10:00:00Z","subscriptionState":\
            "SUBSCRIPTION_STATE_ACTIVE","latestOrderId":"\(Self.order)..0","linkedPurchaseToken":"tok-o",\(deferredItems)}
            """)
        try archive.v2("tok-n", "premium_lite", at: changeAt, v2JSON(
            state: active, start: "2026-03-12T10:00:00Z", expiry: "2026-05-03T10:00:00Z", latestOrderId: "GPA.3321-0000-0000-00555",
            product: "premium_lite", units: "2", extra: #""linkedPurchaseToken":"tok-o","#))
        let periods = builder.history(id: "tok-o", facts: archive.facts).periods
        #expect(periods.map(\.id) == [Self.order + "..0", "GPA.3321-0000-0000-00555"])
        #expect(periods.last?.start == changeAt)
    }

    /// Monthly polls that missed what came between two orders: the order after the gap began one billing period
    /// before its expiry, not when the one before ended. A pause a poll showed scheduled (`autoResumeTimeMillis`)
    /// ended the first; with nothing shown, an account hold did (a billing issue recovered when the second began).
    @Test(arguments: [true, false])
    func aGapNoPollShowsIsAPauseOrAnAccountHold(pauseShown: Bool) throws {
        let start = ms("2024-01-25T10:00:00Z"), end = ms("2024-03-25T10:00:00Z")
        let resumed = pauseShown ? ms("2024-04-25T10:00:00Z") : ms("2024-03-30T15:00:00Z")
        var archive = Archive()
        try archive.poll("tok-u", at: ms("2024-02-26T02:00:00Z"), start: start, renewal: 0, expiry: end)
        try archive.poll("tok-u", at: ms("2024-03-20T02:00:00Z"), start: start, renewal: 0, expiry: end,
                         autoResume: pauseShown ? resumed : nil)
        try archive.poll("tok-u", at: ms("2024-05-01T02:00:00Z"), start: start, renewal: 1,
                         expiry: Timestamp.addingMonths(1, to: resumed) ?? 0)
        let history = builder.history(id: "tok-u", facts: archive.facts)
        #expect(history.periods.map(\.start) == [ms("2024-02-25T10:00:00Z"), resumed])
        #expect(history.periods.first?.endReason == (pauseShown ? .paused : .billingIssue))
        #expect(history.episodes == (pauseShown ? [] : [BillingEpisode(failedAt: end, graceEnd: end, outcome: .recovered(at: resumed))]))
    }

    /// Token B (yearly) replaces token A on 04-04 (`linkedPurchaseToken`), but no poll showed A after its order
    /// ending 03-10: Google links only a subscription still running, so A renewed on 03-10, and that order ends at
    /// the change. A product change, not a churn and a reactivation.
    @Test func anUpgradeAfterARenewalNoPollShowed() throws {
        let start = ms("2024-01-10T10:00:00Z"), renewed = ms("2024-03-10T10:00:00Z"), changed = ms("2024-04-04T12:00:00Z")
        var archive = Archive()
        try archive.poll("tok-a", at: ms("2024-02-11T02:00:00Z"), start: start, renewal: 0, expiry: renewed)
        try archive.v1("tok-b", "premium_yearly", at: changed, v1JSON(
            start: changed, expiry: ms("2025-04-04T12:00:00Z"), orderId: "GPA.3321-0000-0000-00999", paymentState: 1,
            autoRenewing: true, linked: "tok-a", priceMicros: "49990000"))
        let periods = builder.history(id: "tok-a", facts: archive.facts).periods
        #expect(periods.map(\.id) == [Self.order + "..0", Self.order + "..1", "GPA.3321-0000-0000-00999"])
        #expect(periods[1].start == renewed && periods[1].end == changed && periods[1].endReason == .replaced)
        #expect(periods[1].priceMicros == 4_990_000 && periods[1].isFilledIn)
    }

    /// A 3-day free trial whose first renewal fails (IN_GRACE_PERIOD notice) and recovers a day later, all notices
    /// archived on time, but the first fetch only after the recovery: the trial ran from the purchase to the failure
    /// (shorter than any plan Google sells), and the billing issue at its end was recovered by the order shown.
    @Test func aShortTrialBeforeAFailureNoFetchShowedIsFilledIn() throws {
        let start = ms("2026-01-10T10:00:00Z"), e = ms("2026-01-13T10:00:00Z"), recovered = ms("2026-01-14T16:00:00Z")
        var archive = Archive()
        try archive.rtdns("tok-t", "premium_monthly", [(4, start), (6, e), (1, recovered)])
        try archive.v2("tok-t", "premium_monthly", at: ms("2026-01-20T10:00:00Z"), v2JSON(
            state: active, start: "2026-01-10T10:00:00Z", expiry: "2026-02-13T10:00:00Z", latestOrderId: Self.order + "..0"))
        let history = builder.history(id: "tok-t", facts: archive.facts)
        #expect(history.periods.map(\.isTrial) == [true, false])
        #expect(history.periods.map(\.start) == [start, recovered])
        #expect(history.periods.first?.end == e)
        #expect(history.episodes.map(\.failedAt) == [e])
        #expect(history.episodes.map(\.outcome) == [.recovered(at: recovered)])
    }

    /// Bought on January 30: the first order ends February 28 (months clamp), its renewal announced then and first
    /// fetched two days later, running to March 30. A month counted back from February 28 is January 28, yet the
    /// plan is monthly, not four-weekly: the renewal began February 28, back to back, no gap, no churn.
    @Test func aMonthEndPurchaseIsMonthlyAndItsRenewalBackToBack() throws {
        let start = ms("2026-01-30T10:00:00Z"), renewed = ms("2026-02-28T10:00:00Z")
        var archive = Archive()
        try archive.rtdn("tok-me", "premium_monthly", 4, at: start)
        try archive.v2("tok-me", "premium_monthly", at: start, v2JSON(
            state: active, start: "2026-01-30T10:00:00Z", expiry: "2026-02-28T10:00:00Z", latestOrderId: Self.order))
        try archive.rtdn("tok-me", "premium_monthly", 2, at: renewed)
        try archive.v2("tok-me", "premium_monthly", at: ms("2026-03-02T10:00:00Z"), v2JSON(
            state: active, start: "2026-01-30T10:00:00Z", expiry: "2026-03-30T10:00:00Z", latestOrderId: Self.order + "..0"))
        let history = builder.history(id: "tok-me", facts: archive.facts)
        #expect(history.periods.map(\.start) == [start, renewed])
        #expect(history.episodes.isEmpty)
    }

    /// Google sets no `startTime` on a purchase still pending: logged without `received_at`, such a resource grants
    /// nothing and is used (no facts), not quarantined; one of a test purchase still marks its token, so that the
    /// token's RTDN is excluded too.
    @Test func aPendingPurchaseWithoutAnyTimeIsUsedAndATestOneStillMarksItsToken() throws {
        let translator = PlayStoreTranslator(packageNames: [package], times: testTimes)
        for state in ["SUBSCRIPTION_STATE_PENDING", "SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED"] {
            let pending = """
                {"kind":"androidpublisher#subscriptionPurchaseV2","regionCode":"BR","subscriptionState":"\(state)",\
                "latestOrderId":"GPA.3320-0000-0000-00201","acknowledgementState":"ACKNOWLEDGEMENT_STATE_PENDING",\
                "lineItems":[{"productId":"premium_monthly","autoRenewingPlan":{"autoRenewEnabled":true},\
                "offerDetails":{"basePlanId":"monthly"}}]}
                """
            #expect(translator.translate(try record(.googleSubscriptionV2, pending, token: "tok-pend")) == .used([]))
            let test = String(pending.dropLast()) + #","testPurchase":{}}"#
            guard case .excluded(.test, let markers) = translator.translate(try record(.googleSubscriptionV2, test, token: "tok-pend"))
            else { Issue.record("a test purchase is excluded as test"); continue }
            #expect(markers.map(\.kind) == [.testPurchase])
            #expect(markers.map(\.subject) == ["tok-pend"])
        }
    }
}

extension Archive {
    /// A monthly plan's v1 resource of `token` polled at `at` (logged five seconds later): renewal `..renewal` of
    /// ``PolledResourceTests/order`` paid (or in a billing issue, `paid` false) to `expiry`, auto-renewing.
    mutating func poll(_ token: String, at: Millis, start: Millis, renewal: Int, expiry: Millis, paid: Bool = true,
                       autoResume: Millis? = nil) throws {
        try v1(token, "premium_monthly", at: at, v1JSON(
            start: start, expiry: expiry, orderId: PolledResourceTests.order + "..\(renewal)", paymentState: paid ? 1 : 0,
            autoRenewing: true, autoResume: autoResume))
    }
}

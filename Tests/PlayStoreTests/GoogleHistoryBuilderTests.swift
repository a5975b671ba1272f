import Facts
import Ingest
@testable import PlayStore
import Testing

private let builder = GoogleHistoryBuilder()
private let active = "SUBSCRIPTION_STATE_ACTIVE"
private let day: Millis = 86_400_000

struct GoogleHistoryBuilderTests {
    static let order = "GPA.3345-6789-0123-45678"

    /// examples.md B: paid 01-31 23:00 → 02-29 23:00; the renewal fails (E), grace to 03-07 23:00 (G), account
    /// hold; recovered 03-15 12:00 (T) with a new order to 04-15 12:00; that order refunded 04-01 09:00.
    /// Logged as Google sends it: an RTDN per event, then the resource fetched after it (v1 and v2 mixed), and
    /// the voided-purchases list a day after the refund.
    static func exampleB() throws -> [Fact] {
        let token = "tok-B", product = "premium_monthly", renewal = order + "..0"
        let start = ms("2024-01-31T23:00:00Z"), e = ms("2024-02-29T23:00:00Z"), g = ms("2024-03-07T23:00:00Z")
        let t = ms("2024-03-15T12:00:00Z"), refund = ms("2024-04-01T09:00:00Z")
        var archive = Archive()
        try archive.rtdn(token, product, 4, at: start)
        try archive.v1(token, product, at: start, v1JSON(start: start, expiry: e, orderId: order, paymentState: 1, autoRenewing: true))
        try archive.rtdn(token, product, 6, at: e)
        try archive.v1(token, product, at: e, v1JSON(start: start, expiry: g, orderId: renewal, paymentState: 0, autoRenewing: true))
        try archive.rtdn(token, product, 5, at: g)
        try archive.v2(token, product, at: g, v2JSON(state: "SUBSCRIPTION_STATE_ON_HOLD", start: "2024-01-31T23:00:00Z",
                                                     expiry: "2024-03-07T23:00:00Z", latestOrderId: renewal))
        try archive.rtdn(token, product, 1, at: t)
        try archive.v2(token, product, at: t, v2JSON(state: active, start: "2024-01-31T23:00:00.000Z",
                                                     expiry: "2024-04-15T12:00:00.000Z", latestOrderId: renewal))
        try archive.rtdn(token, product, 12, at: refund)
        try archive.v1(token, product, at: refund, v1JSON(start: start, expiry: refund, orderId: renewal, paymentState: 1,
                                                          autoRenewing: false, cancelReason: 3))
        archive.add(try record(.googleVoidedPurchase, """
            {"kind":"androidpublisher#voidedPurchase","purchaseToken":"\(token)","purchaseTimeMillis":"\(t)",\
            "voidedTimeMillis":"\(refund)","orderId":"\(renewal)","voidedSource":0,"voidedReason":1,"refundType":1}
            """, receivedAt: refund + day))
        #expect(archive.failures.isEmpty)
        return archive.facts
    }

    @Test func exampleBMatchesTheWorkedExample() throws {
        let history = builder.history(id: "tok-B", facts: try Self.exampleB())
        let expected = SubscriptionHistory(
            platform: .google, id: "tok-B",
            periods: [
                Period(id: Self.order, productId: "premium_monthly", start: ms("2024-01-31T23:00:00Z"), end: ms("2024-02-29T23:00:00Z"),
                       priceMicros: 4_990_000, currency: "USD", endReason: .billingIssue),
                Period(id: Self.order + "..0", productId: "premium_monthly", start: ms("2024-03-15T12:00:00Z"),
                       end: ms("2024-04-15T12:00:00Z"), priceMicros: 4_990_000, currency: "USD",
                       revokedAt: ms("2024-04-01T09:00:00Z")),
            ],
            episodes: [BillingEpisode(failedAt: ms("2024-02-29T23:00:00Z"), graceEnd: ms("2024-03-07T23:00:00Z"),
                                      outcome: .recovered(at: ms("2024-03-15T12:00:00Z")))],
            currencies: ["USD"])
        #expect(history == expected)
    }

    /// A renewal only its SUBSCRIPTION_RENEWED notification shows (the fetch after it is missing), then an upgrade
    /// on a new token linked to the old one: the renewal is an order at the plan's price from the old end, which the
    /// upgrade replaces, so the change is a product change, not a churn and a reactivation. A later fetch of the
    /// announced order replaces what was inferred.
    @Test func aRenewalOnlyItsNotificationShowsIsAnOrder() throws {
        let bought = ms("2026-02-01T10:00:00Z"), renewed = ms("2026-03-01T10:00:00Z"), upgraded = ms("2026-03-15T12:00:00Z")
        var archive = Archive()
        try archive.rtdn("tok-m1", "music_premium", 4, at: bought)
        try archive.v2("tok-m1", "music_premium", at: bought, v2JSON(state: active, start: "2026-02-01T10:00:00Z",
                                                                    expiry: "2026-03-01T10:00:00Z", latestOrderId: "GPA.3300-0000-0000-00001",
                                                                    product: "music_premium", units: "9", currency: "EUR"))
        try archive.rtdn("tok-m1", "music_premium", 2, at: renewed)
        let beforeUpgrade = archive
        try archive.rtdn("tok-m2", "music_family", 4, at: upgraded)
        try archive.v2("tok-m2", "music_family", at: upgraded, v2JSON(
            state: active, start: "2026-03-15T12:00:00Z", expiry: "2026-04-01T10:00:00Z", latestOrderId: "GPA.3300-0000-0000-00002",
            product: "music_family", units: "14", currency: "EUR", offerPhase: #""prorationPeriod":{}"#,
            extra: #""linkedPurchaseToken":"tok-m1","#))
        try archive.rtdn("tok-m1", "music_premium", 13, at: upgraded)
        #expect(archive.failures.isEmpty)
        let history = builder.history(id: "tok-m1", facts: archive.facts)
        #expect(history.periods.map(\.id) == ["GPA.3300-0000-0000-00001", "GPA.3300-0000-0000-00001..0", "GPA.3300-0000-0000-00002"])
        let renewal = history.periods[1]
        #expect(renewal.start == renewed && renewal.end == upgraded && renewal.endReason == .replaced)
        #expect(renewal.priceMicros == 9_990_000 && renewal.currency == "EUR" && renewal.isFilledIn)
        #expect(renewal.scheduledEnd == ms("2026-04-01T10:00:00Z"))

        // Fetched after all, its resource's end and price stand.
        var fetched = beforeUpgrade
        try fetched.v2("tok-m1", "music_premium", at: renewed + 3_600_000, v2JSON(
            state: active, start: "2026-02-01T10:00:00Z", expiry: "2026-04-01T10:00:03Z",
            latestOrderId: "GPA.3300-0000-0000-00001..0", product: "music_premium", units: "10", currency: "EUR"))
        let shown = builder.history(id: "tok-m1", facts: fetched.facts).periods
        #expect(shown.map(\.id) == ["GPA.3300-0000-0000-00001", "GPA.3300-0000-0000-00001..0"])
        #expect(shown[1].start == renewed && shown[1].end == ms("2026-04-01T10:00:03Z") && shown[1].scheduledEnd == nil)
        #expect(shown[1].priceMicros == 10_990_000 && !shown[1].isFilledIn)
        // No renewal notice: the order ends at its expiry, and nothing is made up.
        var silent = Archive()
        for fact in beforeUpgrade.facts where !(fact.kind == GoogleFactKind.event && fact.at == renewed) { silent.facts.append(fact) }
        #expect(builder.history(id: "tok-m1", facts: silent.facts).periods.map(\.id) == ["GPA.3300-0000-0000-00001"])
    }

    /// What a renewal notice alone does not announce, and what replaces it (a review's cases): an expired resource
    /// fetched later shows the order and its price; a notified price change leaves the order unpriced; a first order
    /// that may have been a trial, or an offer, has no billing period to repeat; a late fetch of an older order
    /// leaves the announced one.
    @Test func whatARenewalNoticeAloneDoesNotAnnounce() throws {
        let bought = ms("2026-01-05T00:00:00Z"), renewed = ms("2026-02-05T00:00:00Z"), product = "premium_monthly"
        func base(_ offerPhase: String = #""basePrice":{}"#) throws -> Archive {
            var archive = Archive()
            try archive.v2("tok-r", product, at: bought, v2JSON(state: active, start: "2026-01-05T00:00:00Z", expiry: "2026-02-05T00:00:00Z",
                                                               latestOrderId: "GPA.3400-0000-0000-00009", offerPhase: offerPhase))
            return archive
        }
        // Expired and fetched after the end: the resource's price (6.99) and end stand.
        var expired = try base()
        try expired.rtdn("tok-r", product, 2, at: renewed)
        try expired.v2("tok-r", product, at: ms("2026-03-06T00:00:00Z"), v2JSON(
            state: "SUBSCRIPTION_STATE_EXPIRED", start: "2026-01-05T00:00:00Z", expiry: "2026-03-05T00:00:00Z",
            latestOrderId: "GPA.3400-0000-0000-00009..0", autoRenew: false, units: "6"))
        let shown = builder.history(id: "tok-r", facts: expired.facts).periods
        #expect(shown.map(\.id) == ["GPA.3400-0000-0000-00009", "GPA.3400-0000-0000-00009..0"])
        #expect(shown.last?.priceMicros == 6_990_000 && shown.last?.end == ms("2026-03-05T00:00:00Z") && shown.last?.isFilledIn == false)
        // A price change notified before the renewal: the order's charge is not the last one's.
        var priced = try base()
        try priced.rtdn("tok-r", product, 19, at: ms("2026-01-20T00:00:00Z"))
        try priced.rtdn("tok-r", product, 2, at: renewed)
        let changed = builder.history(id: "tok-r", facts: priced.facts).periods
        #expect(changed.count == 2 && changed.last?.priceMicros == nil)
        // An introductory first order (its length is the offer's) announces nothing.
        var intro = try base(#""introductoryPrice":{}"#)
        try intro.rtdn("tok-r", product, 2, at: renewed)
        #expect(builder.history(id: "tok-r", facts: intro.facts).periods.count == 1)
        // A late fetch of the first order after a later renewal was announced leaves it.
        var late = try base()
        try late.rtdn("tok-r", product, 2, at: renewed)
        late.add(try record(.googleSubscriptionV2, v2JSON(state: active, start: "2026-01-05T00:00:00Z", expiry: "2026-02-05T00:00:00Z",
                                                          latestOrderId: "GPA.3400-0000-0000-00009"),
                            receivedAt: renewed + 3_600_000, token: "tok-r", product: product))
        #expect(builder.history(id: "tok-r", facts: late.facts).periods.map(\.id) == ["GPA.3400-0000-0000-00009", "GPA.3400-0000-0000-00009..0"])
    }

    /// A token only RTDNs name (the backend archived no resource for it) gives no period, since an RTDN states
    /// neither expiry nor price; the history names it, with its product and first event time, for the report to say.
    @Test func aTokenOnlyNotificationsNameIsListed() throws {
        var archive = Archive()
        let bought = ms("2024-05-02T08:00:00Z")
        try archive.rtdn("tok-rtdn-only", "premium_yearly", 4, at: bought)
        try archive.rtdn("tok-rtdn-only", "premium_yearly", 2, at: bought + 365 * day)
        let history = builder.history(id: "tok-rtdn-only", facts: archive.facts)
        #expect(history.periods.isEmpty && history.purchases.isEmpty)
        #expect(history.notifiedOnlyTokens == [UnheldStatement(productId: "premium_yearly", at: bought)])
        // A pending purchase cancelled before it was paid (SUBSCRIPTION_PENDING_PURCHASE_CANCELED, 20) never had a
        // period to leave out.
        var pending = Archive()
        try pending.rtdn("tok-pending", "premium_yearly", 20, at: bought)
        #expect(builder.history(id: "tok-pending", facts: pending.facts).notifiedOnlyTokens.isEmpty)
        // A token a resource shows is no such token, nor is a test purchase's.
        #expect(builder.history(id: "tok-B", facts: try Self.exampleB()).notifiedOnlyTokens.isEmpty)
        let tested = archive.facts + [GoogleFactCodec.encode(.testPurchase(token: "tok-rtdn-only", at: bought), observedAt: bought)]
        #expect(builder.history(id: "tok-rtdn-only", facts: tested).notifiedOnlyTokens.isEmpty)
    }

    /// A token only voided purchases name (the voided-purchases list names refunded orders of the app, archived or
    /// not, one-time products by default) refunds a charge no table holds: its void is listed as unplaced, once
    /// though both the list and the RTDN name it; no void names a product. A voided one-time product whose
    /// purchase is archived is no such token.
    @Test func aTokenOnlyAVoidNamesIsListed() throws {
        let bought = ms("2024-05-02T08:00:00Z")
        var archive = Archive()
        try archive.voidedRTDN("tok-void-only", order: "GPA.3300-0000-0000-00001", refundType: 1, at: bought + day)
        archive.add(try record(.googleVoidedPurchase, """
            {"voidedPurchases":[{"kind":"androidpublisher#voidedPurchase","purchaseToken":"tok-void-only",\
            "purchaseTimeMillis":"\(bought)","voidedTimeMillis":"\(bought + day)","orderId":"GPA.3300-0000-0000-00001",\
            "voidedSource":0,"voidedReason":1}]}
            """, receivedAt: bought + 2 * day))
        let history = builder.history(id: "tok-void-only", facts: archive.facts)
        #expect(history.periods.isEmpty && history.purchases.isEmpty && history.notifiedOnlyTokens.isEmpty)
        #expect(history.unplacedRefunds == [UnheldStatement(productId: "", at: bought + day)])
        try archive.product("tok-void-only", "coins_100", order: "GPA.3300-0000-0000-00001", quantity: 1, at: bought)
        let bought100 = builder.history(id: "tok-void-only", facts: archive.facts)
        #expect(bought100.unplacedRefunds.isEmpty)
        #expect(bought100.purchases.count == 1)
    }

    @Test func arrivalOrderDoesNotMatter() throws {
        let facts = try Self.exampleB()
        let expected = builder.history(id: "tok-B", facts: facts)
        #expect(builder.history(id: "tok-B", facts: facts.reversed()) == expected)
        var generator = SeededGenerator(state: 20_240_101)
        for _ in 0..<20 {
            #expect(builder.history(id: "tok-B", facts: facts.shuffled(using: &generator)) == expected)
        }
        // The same facts stated twice (two archives holding one record) are one set.
        #expect(builder.history(id: "tok-B", facts: facts + facts.reversed()) == expected)
    }

    @Test func graceRecoveryKeepsTheRenewalDate() throws {
        let token = "tok-g", product = "premium_monthly"
        let start = ms("2024-01-01T00:00:00Z"), e = ms("2024-02-01T00:00:00Z"), g = ms("2024-02-08T00:00:00Z")
        let t = ms("2024-02-03T06:00:00Z"), next = ms("2024-03-01T00:00:00Z")
        var archive = Archive()
        try archive.rtdn(token, product, 4, at: start)
        try archive.v1(token, product, at: start, v1JSON(start: start, expiry: e, orderId: "GPA.1", paymentState: 1, autoRenewing: true))
        try archive.rtdn(token, product, 6, at: e)
        try archive.v1(token, product, at: e, v1JSON(start: start, expiry: g, orderId: "GPA.1..0", paymentState: 0, autoRenewing: true))
        try archive.rtdn(token, product, 1, at: t)
        try archive.v1(token, product, at: t, v1JSON(start: start, expiry: next, orderId: "GPA.1..0", paymentState: 1, autoRenewing: true))
        try archive.rtdn(token, product, 2, at: next)
        try archive.v1(token, product, at: next, v1JSON(start: start, expiry: next + 31 * day, orderId: "GPA.1..1", paymentState: 1, autoRenewing: true))
        let history = builder.history(id: token, facts: archive.facts)
        #expect(history.periods.map(\.id) == ["GPA.1", "GPA.1..0", "GPA.1..1"])
        #expect(history.periods.map(\.start) == [start, t, next])
        #expect(history.periods.map(\.end) == [e, next, next + 31 * day])
        #expect(history.episodes == [BillingEpisode(failedAt: e, graceEnd: g, outcome: .recovered(at: t))])
    }

    @Test func holdThatIsLostByExpiry() throws {
        let token = "tok-h", product = "premium_monthly"
        let start = ms("2024-01-01T00:00:00Z"), e = ms("2024-02-01T00:00:00Z"), l = ms("2024-03-02T00:00:00Z")
        var archive = Archive()
        try archive.rtdn(token, product, 4, at: start)
        try archive.v1(token, product, at: start, v1JSON(start: start, expiry: e, orderId: "GPA.1", paymentState: 1, autoRenewing: true))
        // No grace period configured: straight to account hold, the v1 expiry in the past.
        try archive.rtdn(token, product, 5, at: e)
        try archive.v1(token, product, at: e, v1JSON(start: start, expiry: e, orderId: "GPA.1..0", paymentState: 0, autoRenewing: true))
        try archive.rtdn(token, product, 13, at: l)
        try archive.v2(token, product, at: l, v2JSON(state: "SUBSCRIPTION_STATE_EXPIRED", start: "2024-01-01T00:00:00Z",
                                                     expiry: "2024-02-01T00:00:00Z", latestOrderId: "GPA.1..0", autoRenew: false))
        let history = builder.history(id: token, facts: archive.facts)
        #expect(history.periods == [Period(id: "GPA.1", productId: product, start: start, end: e, priceMicros: 4_990_000,
                                           currency: "USD", endReason: .billingIssue)])
        #expect(history.episodes == [BillingEpisode(failedAt: e, graceEnd: e, outcome: .lost(at: l))])
    }

    @Test func holdThatIsLostBySystemCancel() throws {
        let token = "tok-c", product = "premium_monthly"
        let start = ms("2024-01-01T00:00:00Z"), e = ms("2024-02-01T00:00:00Z"), g = ms("2024-02-04T00:00:00Z")
        let l = ms("2024-03-01T00:00:00Z")
        var archive = Archive()
        try archive.v1(token, product, at: start, v1JSON(start: start, expiry: e, orderId: "GPA.1", paymentState: 1, autoRenewing: true))
        try archive.rtdn(token, product, 6, at: e)
        try archive.v1(token, product, at: e, v1JSON(start: start, expiry: g, orderId: "GPA.1..0", paymentState: 0, autoRenewing: true))
        try archive.rtdn(token, product, 5, at: g)
        try archive.rtdn(token, product, 3, at: l)
        try archive.v1(token, product, at: l, v1JSON(start: start, expiry: g, orderId: "GPA.1..0", paymentState: 0,
                                                     autoRenewing: false, cancelReason: 1))
        let history = builder.history(id: token, facts: archive.facts)
        #expect(history.episodes == [BillingEpisode(failedAt: e, graceEnd: g, outcome: .lost(at: l))])
        #expect(history.periods.map(\.endReason) == [.billingIssue])
    }

    /// metrics.md: "where the archive never shows how a retry phase ended", the episode is lost at E + 60 days:
    /// Google retries for a grace period of at most 30 days and an account hold of at most 30 more. Before then
    /// (an as-of inside the 60 days) the report counts it open, as any outcome after the as-of.
    @Test func anEpisodeWithNoOutcomeIsLostWhenGoogleStopsRetrying() throws {
        let token = "tok-o", product = "premium_monthly"
        let start = ms("2024-01-01T00:00:00Z"), e = ms("2024-02-01T00:00:00Z"), g = ms("2024-02-04T00:00:00Z")
        var archive = Archive()
        try archive.v1(token, product, at: start, v1JSON(start: start, expiry: e, orderId: "GPA.1", paymentState: 1, autoRenewing: true))
        try archive.v2(token, product, at: e, v2JSON(state: "SUBSCRIPTION_STATE_IN_GRACE_PERIOD", start: "2024-01-01T00:00:00Z",
                                                     expiry: "2024-02-04T00:00:00Z", latestOrderId: "GPA.1..0"))
        try archive.rtdn(token, product, 5, at: g)
        #expect(builder.history(id: token, facts: archive.facts).episodes
                == [BillingEpisode(failedAt: e, graceEnd: g, outcome: .lost(at: ms("2024-04-01T00:00:00Z")))])
    }

    /// A resource fetched long after the hold ended (a backfill's final state) cannot date the loss later than
    /// Google's longest recovery: the episode was lost by E + 60 days.
    @Test func aLateExpiredFetchDatesTheLossNoLaterThanGooglesLongestRecovery() throws {
        let token = "tok-late", product = "premium_monthly"
        let start = ms("2024-01-01T00:00:00Z"), e = ms("2024-02-01T00:00:00Z"), fetched = ms("2024-06-01T00:00:00Z")
        var archive = Archive()
        try archive.v1(token, product, at: start, v1JSON(start: start, expiry: e, orderId: "GPA.1", paymentState: 1, autoRenewing: true))
        try archive.v1(token, product, at: e, v1JSON(start: start, expiry: e, orderId: "GPA.1..0", paymentState: 0, autoRenewing: true))
        try archive.v2(token, product, at: fetched, v2JSON(state: "SUBSCRIPTION_STATE_EXPIRED", start: "2024-01-01T00:00:00Z",
                                                           expiry: "2024-02-01T00:00:00Z", latestOrderId: "GPA.1..0", autoRenew: false))
        #expect(builder.history(id: token, facts: archive.facts).episodes
                == [BillingEpisode(failedAt: e, graceEnd: e, outcome: .lost(at: e + 60 * day))])
    }

    @Test func pauseAndResume() throws {
        let token = "tok-p", product = "premium_monthly"
        let start = ms("2024-01-01T00:00:00Z"), end = ms("2024-02-01T00:00:00Z"), resume = ms("2024-03-01T00:00:00Z")
        var archive = Archive()
        try archive.rtdn(token, product, 4, at: start)
        try archive.v1(token, product, at: start, v1JSON(start: start, expiry: end, orderId: "GPA.1", paymentState: 1, autoRenewing: true))
        try archive.rtdn(token, product, 11, at: start + 10 * day)
        try archive.v1(token, product, at: start + 10 * day, v1JSON(start: start, expiry: end, orderId: "GPA.1", paymentState: 1,
                                                                    autoRenewing: true, autoResume: resume))
        try archive.rtdn(token, product, 10, at: end)
        try archive.v1(token, product, at: end, v1JSON(start: start, expiry: end, orderId: "GPA.1", paymentState: 1,
                                                       autoRenewing: true, autoResume: resume))
        try archive.rtdn(token, product, 1, at: resume)
        try archive.v1(token, product, at: resume, v1JSON(start: start, expiry: resume + 31 * day, orderId: "GPA.1..0",
                                                          paymentState: 1, autoRenewing: true))
        let history = builder.history(id: token, facts: archive.facts)
        #expect(history.periods.map(\.start) == [start, resume])
        #expect(history.periods.map(\.end) == [end, resume + 31 * day])
        #expect(history.periods.map(\.endReason) == [.paused, .unknown])
        // A resume is not a billing recovery.
        #expect(history.episodes.isEmpty)
    }

    @Test func refundThroughAVoidedPurchaseOnly() throws {
        let token = "tok-r", product = "premium_monthly"
        let start = ms("2024-01-01T00:00:00Z"), e = ms("2024-02-01T00:00:00Z"), voided = ms("2024-01-10T00:00:00Z")
        var archive = Archive()
        try archive.v2(token, product, at: start, v2JSON(state: active, start: "2024-01-01T00:00:00Z", expiry: "2024-02-01T00:00:00Z",
                                                         latestOrderId: "GPA.7"))
        archive.add(try record(.googleVoidedPurchase, """
            {"voidedPurchases":[{"kind":"androidpublisher#voidedPurchase","purchaseToken":"\(token)","purchaseTimeMillis":"\(start)",\
            "voidedTimeMillis":"\(voided)","orderId":"GPA.7","voidedSource":1,"voidedReason":7,"refundType":1}]}
            """, receivedAt: voided + day))
        let history = builder.history(id: token, facts: archive.facts)
        #expect(history.periods.count == 1)
        #expect(history.periods.first?.revokedAt == voided)
        #expect(history.periods.first?.end == e)
        #expect(history.unplacedRefunds.isEmpty)
        // A void of an order after a free trial that no record showed (a trial says nothing of the renewals'
        // length, so none is filled in) refunds a charge no period holds: listed for the report to say.
        var trial = Archive()
        try trial.v1(token, product, at: start, v1JSON(start: start, expiry: start + 7 * day, orderId: "GPA.7", paymentState: 2,
                                                       autoRenewing: true))
        trial.add(try record(.googleVoidedPurchase, """
            {"voidedPurchases":[{"kind":"androidpublisher#voidedPurchase","purchaseToken":"\(token)","purchaseTimeMillis":"\(start)",\
            "voidedTimeMillis":"\(voided + 20 * day)","orderId":"GPA.7..1","voidedSource":0,"voidedReason":1}]}
            """, receivedAt: voided + 21 * day))
        let unplaced = builder.history(id: token, facts: trial.facts)
        #expect(unplaced.unplacedRefunds == [UnheldStatement(productId: product, at: voided + 20 * day)])
        #expect(unplaced.periods.allSatisfy { $0.revokedAt == nil })
    }

    /// A void of order `..3` when the resources stop at `..1` proves `..2` and `..3` were bought: they are filled in
    /// (charged, the last one refunded), not dropped with the refund while the subscription read as lapsed at `..1`'s
    /// end. Nothing is filled when a record says why `..1` ended.
    @Test func aVoidOfALaterOrderProvesTheRenewalsBeforeIt() throws {
        let token = "tok-v", product = "premium_monthly"
        let months = ["2024-01-05", "2024-02-05", "2024-03-05", "2024-04-05", "2024-05-05", "2024-06-05"].map { ms($0 + "T10:00:00Z") }
        let voided = ms("2024-06-20T12:00:00Z")
        func archive(autoRenewing: Bool) throws -> Archive {
            var archive = Archive()
            for (index, order) in ["GPA.3", "GPA.3..0", "GPA.3..1"].enumerated() {
                try archive.v1(token, product, at: months[index] + 3_600_000, v1JSON(start: months[0], expiry: months[index + 1], orderId: order,
                                                                                paymentState: 1, autoRenewing: autoRenewing || index < 2))
            }
            archive.add(try record(.googleVoidedPurchase, """
                {"voidedPurchases":[{"kind":"androidpublisher#voidedPurchase","purchaseToken":"\(token)","purchaseTimeMillis":"\(months[4])",\
                "voidedTimeMillis":"\(voided)","orderId":"GPA.3..3","voidedSource":0,"voidedReason":1}]}
                """, receivedAt: voided + day))
            return archive
        }
        let history = builder.history(id: token, facts: try archive(autoRenewing: true).facts)
        #expect(history.periods.map(\.id) == ["GPA.3", "GPA.3..0", "GPA.3..1", "GPA.3..2", "GPA.3..3"])
        #expect(history.periods.map(\.start) == Array(months[0..<5]))
        #expect(history.periods.last?.end == months[5])
        #expect(history.periods.last?.revokedAt == voided)
        #expect(history.periods.last?.priceMicros == 4_990_000)
        // Auto-renew turned off before `..1` ended: it expired there, and the void names an order that cannot be.
        let cancelled = builder.history(id: token, facts: try archive(autoRenewing: false).facts)
        #expect(cancelled.periods.map(\.id) == ["GPA.3", "GPA.3..0", "GPA.3..1"])
    }

    @Test func upgradeThroughALinkedToken() throws {
        let old = "tok-old", new = "tok-new"
        let start = ms("2024-01-01T00:00:00Z"), change = ms("2024-01-15T12:00:00Z")
        var archive = Archive()
        try archive.rtdn(old, "premium_monthly", 4, at: start)
        try archive.v1(old, "premium_monthly", at: start, v1JSON(start: start, expiry: ms("2024-02-01T00:00:00Z"), orderId: "GPA.1",
                                                                 paymentState: 1, autoRenewing: true))
        try archive.rtdn(new, "premium_yearly", 4, at: change)
        try archive.v1(new, "premium_yearly", at: change, v1JSON(start: change, expiry: ms("2025-01-15T12:00:00Z"), orderId: "GPA.2",
                                                                 paymentState: 1, autoRenewing: true, linked: old,
                                                                 priceMicros: "49990000"))
        try archive.v1(old, "premium_monthly", at: change + 1_000, v1JSON(start: start, expiry: change, orderId: "GPA.1", paymentState: 1,
                                                                          autoRenewing: false, cancelReason: 2))
        let history = builder.history(id: old, facts: archive.facts)
        // The old order ends at the change and keeps the end it was sold with (its monthly duration).
        var replacedOrder = Period(id: "GPA.1", productId: "premium_monthly", start: start, end: ms("2024-02-01T00:00:00Z"),
                                   priceMicros: 4_990_000, currency: "USD", endReason: .replaced)
        replacedOrder.end(replacedAt: change)
        #expect(history.periods == [
            replacedOrder,
            Period(id: "GPA.2", productId: "premium_yearly", start: change, end: ms("2025-01-15T12:00:00Z"),
                   priceMicros: 49_990_000, currency: "USD"),
        ])
        #expect(history.episodes.isEmpty)
        // The newer token arriving first changes nothing.
        #expect(builder.history(id: old, facts: archive.facts.reversed()) == history)
    }

    @Test func aDeferredChangeNotYetInEffectReplacesNothing() throws {
        // A yearly plan; on 03-01 the user chooses a monthly plan from the renewal on (paymentState 3: pending
        // deferred upgrade/downgrade). Nothing is charged and the yearly plan runs on.
        let old = "tok-y", new = "tok-dm"
        let start = ms("2024-01-01T00:00:00Z"), change = ms("2024-03-01T00:00:00Z"), oldEnd = ms("2025-01-01T00:00:00Z")
        var archive = Archive()
        try archive.v1(old, "premium_yearly", at: start, v1JSON(start: start, expiry: oldEnd, orderId: "GPA.20",
                                                                paymentState: 1, autoRenewing: true, priceMicros: "49990000"))
        try archive.v1(new, "premium_monthly", at: change, v1JSON(start: change, expiry: ms("2025-02-01T00:00:00Z"),
                                                                  orderId: "GPA.21", paymentState: 3, autoRenewing: true,
                                                                  linked: old))
        let history = builder.history(id: old, facts: archive.facts)
        #expect(history.periods == [Period(id: "GPA.20", productId: "premium_yearly", start: start, end: oldEnd,
                                           priceMicros: 49_990_000, currency: "USD")])
    }

    @Test func resubscribeAfterExpiryIsANewToken() throws {
        let first = "tok-1", second = "tok-2", product = "premium_monthly"
        let start = ms("2024-01-01T00:00:00Z"), end = ms("2024-02-01T00:00:00Z"), again = ms("2024-03-10T00:00:00Z")
        var archive = Archive()
        try archive.v1(first, product, at: start, v1JSON(start: start, expiry: end, orderId: "GPA.1", paymentState: 1, autoRenewing: true))
        try archive.rtdn(first, product, 3, at: start + 5 * day)
        try archive.v1(first, product, at: start + 5 * day, v1JSON(start: start, expiry: end, orderId: "GPA.1", paymentState: 1,
                                                                   autoRenewing: false, cancelReason: 0, userCancellation: start + 5 * day))
        try archive.rtdn(first, product, 13, at: end)
        try archive.v1(second, product, at: again, v1JSON(start: again, expiry: again + 31 * day, orderId: "GPA.2", paymentState: 1, autoRenewing: true))
        // No link: the ledger keeps two subscriptions, each built from its own token's facts.
        #expect(!archive.facts.contains { $0.kind == .link })
        let one = builder.history(id: first, facts: archive.facts.filter { $0.subject == first })
        let two = builder.history(id: second, facts: archive.facts.filter { $0.subject == second })
        #expect(one.periods.map(\.endReason) == [.voluntary])
        #expect(one.periods.map(\.end) == [end])
        #expect(one.episodes.isEmpty)
        #expect(two.periods.map(\.start) == [again])
        #expect(two.periods.map(\.id) == ["GPA.2"])
    }

    @Test func restartClearsACancellation() throws {
        let token = "tok-s", product = "premium_monthly"
        let start = ms("2024-01-01T00:00:00Z"), end = ms("2024-02-01T00:00:00Z")
        var archive = Archive()
        try archive.v1(token, product, at: start, v1JSON(start: start, expiry: end, orderId: "GPA.1", paymentState: 1, autoRenewing: true))
        try archive.rtdn(token, product, 3, at: start + 3 * day)
        try archive.v1(token, product, at: start + 3 * day, v1JSON(start: start, expiry: end, orderId: "GPA.1", paymentState: 1,
                                                                   autoRenewing: false, cancelReason: 0, userCancellation: start + 3 * day))
        #expect(builder.history(id: token, facts: archive.facts).periods.map(\.endReason) == [.voluntary])
        try archive.rtdn(token, product, 7, at: start + 6 * day)
        try archive.v1(token, product, at: start + 6 * day, v1JSON(start: start, expiry: end, orderId: "GPA.1", paymentState: 1, autoRenewing: true))
        #expect(builder.history(id: token, facts: archive.facts).periods.map(\.endReason) == [.unknown])
    }

    @Test func trialThenPaidRenewal() throws {
        let token = "tok-t", product = "premium_monthly"
        let start = ms("2024-01-01T00:00:00Z"), trialEnd = ms("2024-01-08T00:00:00Z"), paidEnd = ms("2024-02-08T00:00:00Z")
        var archive = Archive()
        try archive.v2(token, product, at: start, v2JSON(state: active, start: "2024-01-01T00:00:00Z", expiry: "2024-01-08T00:00:00Z",
                                                         latestOrderId: "GPA.5", offerPhase: "\"freeTrial\":{}"))
        try archive.rtdn(token, product, 2, at: trialEnd)
        try archive.v1(token, product, at: trialEnd, v1JSON(start: start, expiry: paidEnd, orderId: "GPA.5..0", paymentState: 1, autoRenewing: true))
        let history = builder.history(id: token, facts: archive.facts)
        #expect(history.periods.map(\.isTrial) == [true, false])
        #expect(history.periods.map(\.start) == [start, trialEnd])
        #expect(history.periods.map(\.end) == [trialEnd, paidEnd])
        #expect(history.periods.map(\.priceMicros) == [0, 4_990_000])
    }

    /// A v2 `introductoryPrice` phase states no charge (the recurring price is the base plan's): the period is an
    /// introductory one without a price, which the report prices from the list and counts as such; the renewal
    /// at the recurring price is not.
    @Test func introductoryPhaseIsAnIntroductoryPeriodWithoutPrice() throws {
        let token = "tok-ip", product = "premium_monthly"
        let start = ms("2024-01-01T00:00:00Z"), introEnd = ms("2024-02-01T00:00:00Z")
        var archive = Archive()
        try archive.v2(token, product, at: start, v2JSON(state: active, start: "2024-01-01T00:00:00Z", expiry: "2024-02-01T00:00:00Z",
                                                         latestOrderId: "GPA.6", offerPhase: "\"introductoryPrice\":{}"))
        try archive.v2(token, product, at: introEnd, v2JSON(state: active, start: "2024-01-01T00:00:00Z", expiry: "2024-03-01T00:00:00Z",
                                                            latestOrderId: "GPA.6..0"))
        let history = builder.history(id: token, facts: archive.facts)
        #expect(history.periods.map(\.id) == ["GPA.6", "GPA.6..0"])
        #expect(history.periods.map(\.isIntroductory) == [true, false])
        #expect(history.periods.map(\.isTrial) == [false, false])
        #expect(history.periods.first?.priceMicros == nil)
    }

    /// An upgrade with time proration: the new token's first order funds a `prorationPeriod` phase, the credit of
    /// the old plan turned into time on the new one, which may have cost nothing, a difference or the full price.
    /// The period keeps the recurring price (its MRR's rate) and is marked a proration; the renewal after it, at
    /// the base price, is not. A v1 fetch of the order, which has no offer phase, denies nothing: fetched first,
    /// the v2 fetch after it still marks the period.
    @Test func prorationPhaseIsMarkedAndKeepsTheRecurringPrice() throws {
        let token = "tok-pr", product = "premium_monthly"
        let change = ms("2024-01-20T00:00:00Z"), creditEnd = ms("2024-02-28T00:00:00Z")
        var archive = Archive()
        let linked = #""linkedPurchaseToken":"tok-basic","#
        try archive.v1(token, product, at: change - 60_000, v1JSON(start: change, expiry: creditEnd, orderId: "GPA.7", paymentState: 1,
                                                                   autoRenewing: true, linked: "tok-basic", priceMicros: "9990000"))
        try archive.v2(token, product, at: change, v2JSON(state: active, start: "2024-01-20T00:00:00Z", expiry: "2024-02-28T00:00:00Z",
                                                          latestOrderId: "GPA.7", units: "9",
                                                          offerPhase: #""prorationPeriod":{"originalOfferPhaseType":"BASE"}"#, extra: linked))
        try archive.v2(token, product, at: creditEnd, v2JSON(state: active, start: "2024-01-20T00:00:00Z", expiry: "2024-03-28T00:00:00Z",
                                                             latestOrderId: "GPA.7..0", units: "9", extra: linked))
        let history = builder.history(id: token, facts: archive.facts)
        #expect(history.periods.map(\.id) == ["GPA.7", "GPA.7..0"])
        #expect(history.periods.map(\.isProration) == [true, false])
        #expect(history.periods.map(\.priceMicros) == [9_990_000, 9_990_000])
        #expect(history.periods.map(\.start) == [change, creditEnd])
        #expect(history.periods.map(\.isIntroductory) == [false, false])
    }

    @Test func oneTimeProductIsAPurchase() throws {
        var archive = Archive()
        let bought = ms("2024-03-04T12:00:00Z")
        archive.add(try record(.googleProductV1, """
            {"kind":"androidpublisher#productPurchase","purchaseTimeMillis":"\(bought)","purchaseState":0,"consumptionState":1,\
            "orderId":"GPA.9","acknowledgementState":1,"regionCode":"US"}
            """, receivedAt: bought + 5_000, token: "ptok", product: "coins_100", currency: "EUR"))
        archive.add(try record(.googleVoidedPurchase, """
            {"kind":"androidpublisher#voidedPurchase","purchaseToken":"ptok","voidedTimeMillis":"\(bought + day)","orderId":"GPA.9"}
            """))
        let history = builder.history(id: "ptok", facts: archive.facts)
        #expect(history.periods.isEmpty)
        #expect(history.purchases == [OneTimePurchase(id: "GPA.9", productId: "coins_100", purchasedAt: bought, currency: "EUR",
                                                      refunds: [OneTimePurchase.Refund(at: bought + day)])])
        #expect(history.currencies == ["EUR"])
    }

    /// A one-time product fetched only after its refund: Google then shows it cancelled (v1 `purchaseState` 1,
    /// v2 CANCELLED with the completion time of its payment). The voided purchase proves it was paid, so it is
    /// a sale at its purchase time and a refund at the void, as if it had been fetched before. A cancelled
    /// resource with no void (a pending purchase cancelled unpaid) stays no sale.
    @Test func aPurchaseFetchedOnlyAfterItsRefundIsASaleAndARefund() throws {
        let bought = ms("2025-04-02T09:00:00Z"), voided = ms("2025-04-05T16:30:00Z"), fetched = ms("2025-04-20T00:00:00Z")
        let v1 = #"{"kind":"androidpublisher#productPurchase","purchaseTimeMillis":"\#(bought)","purchaseState":1,"#
            + #""consumptionState":1,"orderId":"GPA.3301-4455-6677-88990","acknowledgementState":1,"regionCode":"DE"}"#
        let v2 = #"{"kind":"androidpublisher#productPurchaseV2","productLineItem":[{"productId":"gems_100","#
            + #""productOfferDetails":{"quantity":1,"consumptionState":"CONSUMPTION_STATE_CONSUMED"}}],"#
            + #""purchaseStateContext":{"purchaseState":"CANCELLED"},"purchaseCompletionTime":"2025-04-02T09:00:00Z","#
            + #""orderId":"GPA.3301-4455-6677-88990","acknowledgementState":"ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED","regionCode":"DE"}"#
        for (kind, body) in [(SourceKind.googleProductV1, v1), (.googleProductV2, v2)] {
            var archive = Archive()
            archive.add(try record(kind, body, receivedAt: fetched, token: "rtok", product: "gems_100", currency: "EUR"))
            #expect(builder.history(id: "rtok", facts: archive.facts).purchases.isEmpty)
            archive.add(try record(.googleVoidedPurchase, """
                {"kind":"androidpublisher#voidedPurchase","purchaseToken":"rtok","purchaseTimeMillis":"\(bought)",\
                "voidedTimeMillis":"\(voided)","orderId":"GPA.3301-4455-6677-88990","voidedSource":0,"voidedReason":1}
                """, receivedAt: fetched))
            #expect(archive.failures.isEmpty)
            #expect(builder.history(id: "rtok", facts: archive.facts).purchases == [OneTimePurchase(
                id: "GPA.3301-4455-6677-88990", productId: "gems_100", purchasedAt: bought, currency: "EUR",
                refunds: [OneTimePurchase.Refund(at: voided)])])
        }
    }

    /// `ProductPurchase.purchaseType` 1 is a purchase with a promo code, 2 a reward (an ad watched instead of
    /// paying): neither was paid for, so neither is a sale, though the ONE_TIME_PRODUCT_PURCHASED notification
    /// says nothing of it. `purchaseType` absent is a sale as before.
    @Test func promoCodeAndRewardedProductsAreNoSale() throws {
        let bought = ms("2025-03-01T10:00:00Z")
        var archives: [String: Archive] = [:]
        for (token, purchaseType) in [("tok-promo", #""purchaseType":1,"#), ("tok-reward", #""purchaseType":2,"#), ("tok-paid", "")] {
            var archive = Archive()
            let resource = #"{"kind":"androidpublisher#productPurchase","purchaseTimeMillis":"\#(bought)","purchaseState":0,"#
                + #""consumptionState":1,\#(purchaseType)"acknowledgementState":1,"regionCode":"US"}"#
            archive.add(try record(.googleProductV1, resource, receivedAt: bought + 5_000, token: token, product: "gems_100",
                                   currency: "USD"))
            let notification = #"{"version":"1.0","packageName":"\#(package)","eventTimeMillis":"\#(bought)","#
                + #""oneTimeProductNotification":{"version":"1.0","notificationType":1,"purchaseToken":"\#(token)","sku":"gems_100"}}"#
            archive.add(try record(.googleRTDN, notification, receivedAt: bought))
            #expect(archive.failures.isEmpty)
            archives[token] = archive
        }
        func purchases(_ token: String) -> [String] {
            builder.history(id: token, facts: archives[token]?.facts ?? []).purchases.map(\.productId)
        }
        #expect(purchases("tok-promo").isEmpty && purchases("tok-reward").isEmpty)
        #expect(purchases("tok-paid") == ["gems_100"])
    }

    /// A one-time purchase fetched while pending (`ProductPurchaseV2` PENDING, 2 units), then announced by its
    /// ONE_TIME_PRODUCT_PURCHASED notification with no fetch after: the notification states no quantity, the
    /// token's resource does, so the sale is of 2 units, in the resource's currency.
    @Test func aPurchaseAnnouncedAfterItsPendingFetchKeepsItsQuantity() throws {
        var archive = Archive()
        let fetched = ms("2026-02-03T10:00:00Z"), completed = ms("2026-02-03T10:20:00Z")
        archive.add(try record(.googleProductV2, """
            {"kind":"androidpublisher#productPurchaseV2","productLineItem":[{"productId":"coins_500",\
            "productOfferDetails":{"quantity":2,"refundableQuantity":2,"consumptionState":"CONSUMPTION_STATE_YET_TO_BE_CONSUMED"}}],\
            "purchaseStateContext":{"purchaseState":"PENDING"},"orderId":"GPA.3311-2222-3333-44444","regionCode":"US"}
            """, receivedAt: fetched, token: "pending-tok", currency: "USD"))
        archive.add(try record(.googleRTDN, """
            {"version":"1.0","packageName":"\(package)","eventTimeMillis":"\(completed)",\
            "oneTimeProductNotification":{"version":"1.0","notificationType":1,"purchaseToken":"pending-tok","sku":"coins_500"}}
            """, receivedAt: completed))
        #expect(archive.failures.isEmpty)
        #expect(builder.history(id: "pending-tok", facts: archive.facts).purchases == [OneTimePurchase(
            id: "pending-tok", productId: "coins_500", purchasedAt: completed, currency: "USD", quantity: 2)])
    }

    /// A multi-quantity purchase (`quantity` 7, sent as Google's int64 string) and two quantity-based partial
    /// refunds as `purchases.voidedpurchases.list` returns them with `includeQuantityBasedPartialRefund`: items
    /// with `voidedQuantity` and no `refundType` (the resource has none). The first is also announced by a
    /// voided-purchase RTDN (`refundType` 2, no units), which adds nothing. Each refund is its own, at its own
    /// time, and an exact share of the price (1/7 and 2/7, not rounded to a percentage).
    @Test func quantitiesAndPartialRefundsOfAOneTimeProduct() throws {
        var archive = Archive()
        let bought = ms("2024-03-04T12:00:00Z"), first = bought + day, second = ms("2024-05-10T00:00:00Z")
        archive.add(try record(.googleProductV1, """
            {"kind":"androidpublisher#productPurchase","purchaseTimeMillis":"\(bought)","purchaseState":0,"consumptionState":0,\
            "orderId":"GPA.7","quantity":"7","refundableQuantity":7,"regionCode":"ID"}
            """, receivedAt: bought + 5_000, token: "qtok", product: "gems_10", currency: "IDR"))
        try archive.voidedRTDN("qtok", order: "GPA.7", refundType: 2, at: first)
        for (at, units) in [(first, 1), (second, 2)] {
            archive.add(try record(.googleVoidedPurchase, """
                {"kind":"androidpublisher#voidedPurchase","purchaseToken":"qtok","purchaseTimeMillis":"\(bought)",\
                "voidedTimeMillis":"\(at)","orderId":"GPA.7","voidedSource":0,"voidedReason":1,"voidedQuantity":\(units)}
                """, receivedAt: second + day))
        }
        #expect(archive.failures.isEmpty)
        let history = builder.history(id: "qtok", facts: archive.facts)
        #expect(history.purchases == [OneTimePurchase(
            id: "GPA.7", productId: "gems_10", purchasedAt: bought, currency: "IDR", quantity: 7,
            refunds: [OneTimePurchase.Refund(at: first, parts: 1, whole: 7), OneTimePurchase.Refund(at: second, parts: 2, whole: 7)])])

        // A full refund later gives back what is left; partial refunds no item states the units of (an RTDN
        // alone) give back the whole.
        var later = archive
        later.add(try record(.googleVoidedPurchase, """
            {"kind":"androidpublisher#voidedPurchase","purchaseToken":"qtok","voidedTimeMillis":"\(second + day)","orderId":"GPA.7"}
            """, receivedAt: second + 2 * day))
        #expect(builder.history(id: "qtok", facts: later.facts).purchases.first?.refunds.last
                == OneTimePurchase.Refund(at: second + day, parts: 4, whole: 7))
        var unstated = Archive()
        try unstated.product("u", "coins_100", order: "GPA.8", quantity: 3, at: bought)
        try unstated.voidedRTDN("u", order: "GPA.8", refundType: 2, at: first)
        let whole = builder.history(id: "u", facts: unstated.facts).purchases
        #expect(whole.map(\.quantity) == [3] && whole.map(\.refunds) == [[OneTimePurchase.Refund(at: first, parts: 3, whole: 3)]])
    }

    /// Refunds are worked out from the voids up to each one: a report cut at an as-of sees the same refunds
    /// before it whatever voids came later (a partial refund announced by RTDN alone, then an item of another
    /// refund two months later, then a full refund).
    @Test func laterVoidsDoNotChangeEarlierRefunds() throws {
        let bought = ms("2024-03-01T10:00:00Z"), announced = ms("2024-03-10T10:00:00Z")
        let later = ms("2024-05-05T10:00:00Z"), full = ms("2024-06-01T10:00:00Z")
        var archive = Archive()
        try archive.product("t5", "coins_100", order: "GPA.5", quantity: 3, at: bought)
        try archive.voidedRTDN("t5", order: "GPA.5", refundType: 2, at: announced)
        let before = builder.history(id: "t5", facts: archive.facts).purchases.first?.refunds
        archive.add(try record(.googleVoidedPurchase, """
            {"purchaseToken":"t5","voidedTimeMillis":"\(later)","orderId":"GPA.5","voidedQuantity":1}
            """, receivedAt: later))
        try archive.voidedRTDN("t5", order: "GPA.5", refundType: 1, at: full)
        let after = builder.history(id: "t5", facts: archive.facts).purchases.first?.refunds
        #expect(before == [OneTimePurchase.Refund(at: announced, parts: 3, whole: 3)])
        #expect(after?.filter { $0.at <= ms("2024-04-30T23:59:59Z") } == before)
    }

    /// A quantity that is no count of units is quarantined with the record, naming the field; null reads as 1.
    @Test(arguments: ["0", "-1", "\"1001\"", "\"many\"", "{}"])
    func anImpossibleQuantityIsQuarantined(_ quantity: String) throws {
        let translator = PlayStoreTranslator(packageNames: [package], times: testTimes)
        let json = #"{"purchaseTimeMillis":"1709553600000","purchaseState":0,"quantity":"# + quantity + "}"
        let translation = translator.translate(try record(.googleProductV1, json, token: "t", product: "p"))
        guard case .quarantined(let reason, let detail) = translation else {
            Issue.record("used: \(translation)")
            return
        }
        #expect(reason == .invalidPayload && detail.contains("quantity"))
        let null = #"{"purchaseTimeMillis":"1709553600000","purchaseState":0,"quantity":null}"#
        #expect(usedFacts(translator.translate(try record(.googleProductV1, null, token: "t", product: "p"))).first?.detail == "0")
    }
}

struct GoogleGraceTrapTests {
    @Test func cancelledDuringGraceIsNotARecovery() throws {
        let token = "tok-x", product = "premium_monthly"
        let start = ms("2024-01-01T00:00:00Z"), e = ms("2024-02-01T00:00:00Z"), g = ms("2024-02-08T00:00:00Z")
        var archive = Archive()
        try archive.v1(token, product, at: start, v1JSON(start: start, expiry: e, orderId: "GPA.1", paymentState: 1, autoRenewing: true))
        try archive.rtdn(token, product, 6, at: e)
        try archive.v2(token, product, at: e, v2JSON(state: "SUBSCRIPTION_STATE_IN_GRACE_PERIOD", start: "2024-01-01T00:00:00Z",
                                                     expiry: "2024-02-08T00:00:00Z", latestOrderId: "GPA.1..0"))
        try archive.rtdn(token, product, 3, at: e + 86_400_000)
        try archive.v2(token, product, at: e + 86_400_000, v2JSON(
            state: "SUBSCRIPTION_STATE_CANCELED", start: "2024-01-01T00:00:00Z", expiry: "2024-02-08T00:00:00Z",
            latestOrderId: "GPA.1..0", autoRenew: false,
            extra: #""canceledStateContext":{"userInitiatedCancellation":{"cancelTime":"2024-02-02T00:00:00Z"}},"#))
        try archive.rtdn(token, product, 13, at: g)
        let history = GoogleHistoryBuilder().history(id: token, facts: archive.facts)
        #expect(history.periods.map(\.id) == ["GPA.1"])
        #expect(history.periods.map(\.end) == [e])
        #expect(history.episodes == [BillingEpisode(failedAt: e, graceEnd: g, outcome: .lost(at: g))])
    }

    /// Renewals and recoveries only notifications show, the next fetch weeks later (the backend's fetches failed):
    /// the orders and the episode are what a fetch at each notification would have shown.
    struct NotifiedOnly {
        let token = "tok-n", product = "premium_monthly"
        var archive = Archive()

        init(bought: String, expiry: String) throws {
            try archive.v2(token, product, at: ms(bought), v2JSON(state: "SUBSCRIPTION_STATE_ACTIVE", start: bought, expiry: expiry,
                                                                 latestOrderId: "GPA.1234-5678-9012-34567"))
        }

        mutating func notify(_ type: Int, _ at: String) throws { try archive.rtdn(token, product, type, at: ms(at)) }

        mutating func fetch(_ state: String, at: String, start: String, expiry: String, order: String) throws {
            try archive.v2(token, product, at: ms(at), v2JSON(state: state, start: start, expiry: expiry, latestOrderId: order))
        }

        var history: SubscriptionHistory { GoogleHistoryBuilder().history(id: token, facts: archive.facts) }

        /// Each period as "order start end", the order's `..N` suffix only.
        var orders: [String] {
            history.periods.map { "\($0.id.split(separator: ".").last ?? "") \(Timestamp.rfc3339($0.start)) \(Timestamp.rfc3339($0.end))" }
        }
    }

    /// Grace, then account hold, then SUBSCRIPTION_RECOVERED, with or without the RENEWED notices of the two
    /// renewals after it; one fetch in May shows `..2`. Recovered at the RECOVERED notice (not the last notice
    /// before the fetch), and `..0` and `..1` are filled in from there, so February to April each have an order.
    @Test(arguments: [false, true]) func aRecoveryFromHoldKnownOnlyByNotifications(renewalsNotified: Bool) throws {
        var token = try NotifiedOnly(bought: "2026-01-10T10:00:00Z", expiry: "2026-02-10T10:00:00Z")
        try token.notify(6, "2026-02-10T10:00:00Z")
        try token.notify(5, "2026-02-17T10:00:00Z")
        try token.notify(1, "2026-02-25T12:00:00Z")
        if renewalsNotified {
            try token.notify(2, "2026-03-25T12:00:00Z")
            try token.notify(2, "2026-04-25T12:00:00Z")
        }
        try token.fetch("SUBSCRIPTION_STATE_ACTIVE", at: "2026-05-01T00:00:00Z", start: "2026-01-10T10:00:00Z",
                        expiry: "2026-05-25T12:00:00Z", order: "GPA.1234-5678-9012-34567..2")
        #expect(token.orders == [
            "1234-5678-9012-34567 2026-01-10T10:00:00.000Z 2026-02-10T10:00:00.000Z",
            "0 2026-02-25T12:00:00.000Z 2026-03-25T12:00:00.000Z",
            "1 2026-03-25T12:00:00.000Z 2026-04-25T12:00:00.000Z",
            "2 2026-04-25T12:00:00.000Z 2026-05-25T12:00:00.000Z",
        ])
        #expect(token.history.periods.map(\.priceMicros) == Array(repeating: 4_990_000, count: 4))
        #expect(token.history.episodes == [BillingEpisode(failedAt: ms("2026-02-10T10:00:00Z"), graceEnd: ms("2026-02-17T10:00:00Z"),
                                                          outcome: .recovered(at: ms("2026-02-25T12:00:00Z")))])
    }

    /// A renewal that succeeded in grace (RENEWED two days after IN_GRACE_PERIOD; the billing date stays), then
    /// one more, both known only by notifications. Recovered in grace whether or not a fetch showed the grace's
    /// end: without one the grace is still running at the recovery, so it is taken to run as long as Google's can.
    @Test(arguments: [false, true]) func aRecoveryInGraceKnownOnlyByNotifications(graceFetched: Bool) throws {
        var token = try NotifiedOnly(bought: "2026-01-10T10:00:00Z", expiry: "2026-02-10T10:00:00Z")
        try token.notify(6, "2026-02-10T10:00:00Z")
        if graceFetched {
            try token.fetch("SUBSCRIPTION_STATE_IN_GRACE_PERIOD", at: "2026-02-10T10:00:00Z", start: "2026-01-10T10:00:00Z",
                            expiry: "2026-02-17T10:00:00Z", order: "GPA.1234-5678-9012-34567")
        }
        try token.notify(2, "2026-02-12T10:00:00Z")
        try token.notify(2, "2026-03-10T10:00:00Z")
        try token.fetch("SUBSCRIPTION_STATE_ACTIVE", at: "2026-04-01T00:00:00Z", start: "2026-01-10T10:00:00Z",
                        expiry: "2026-04-10T10:00:00Z", order: "GPA.1234-5678-9012-34567..1")
        #expect(token.orders == [
            "1234-5678-9012-34567 2026-01-10T10:00:00.000Z 2026-02-10T10:00:00.000Z",
            "0 2026-02-12T10:00:00.000Z 2026-03-10T10:00:00.000Z",
            "1 2026-03-10T10:00:00.000Z 2026-04-10T10:00:00.000Z",
        ])
        let e = ms("2026-02-10T10:00:00Z")
        #expect(token.history.episodes == [BillingEpisode(
            failedAt: e, graceEnd: graceFetched ? ms("2026-02-17T10:00:00Z") : e + 30 * 86_400_000,
            outcome: .recovered(at: ms("2026-02-12T10:00:00Z")))])
    }

    /// A pause resumed early (SUBSCRIPTION_RECOVERED), then a renewal, both known only by notifications: the
    /// resumed order starts at the resume, not at the renewal before the next fetch.
    @Test func aResumeKnownOnlyByNotifications() throws {
        var token = try NotifiedOnly(bought: "2026-01-10T10:00:00Z", expiry: "2026-02-10T10:00:00Z")
        try token.notify(2, "2026-02-10T10:00:00Z")
        try token.fetch("SUBSCRIPTION_STATE_ACTIVE", at: "2026-02-10T10:00:00Z", start: "2026-01-10T10:00:00Z",
                        expiry: "2026-03-10T10:00:00Z", order: "GPA.1234-5678-9012-34567..0")
        try token.notify(10, "2026-03-10T10:00:00Z")
        try token.notify(1, "2026-04-02T09:00:00Z")
        try token.notify(2, "2026-05-02T09:00:00Z")
        try token.fetch("SUBSCRIPTION_STATE_ACTIVE", at: "2026-05-20T00:00:00Z", start: "2026-01-10T10:00:00Z",
                        expiry: "2026-06-02T09:00:00Z", order: "GPA.1234-5678-9012-34567..2")
        #expect(token.orders == [
            "1234-5678-9012-34567 2026-01-10T10:00:00.000Z 2026-02-10T10:00:00.000Z",
            "0 2026-02-10T10:00:00.000Z 2026-03-10T10:00:00.000Z",
            "1 2026-04-02T09:00:00.000Z 2026-05-02T09:00:00.000Z",
            "2 2026-05-02T09:00:00.000Z 2026-06-02T09:00:00.000Z",
        ])
        #expect(token.history.periods.map(\.endReason) == [.unknown, .paused, .unknown, .unknown])
        #expect(token.history.episodes.isEmpty)
    }

    /// A recovery or a resume that only its notice shows, with no fetch after it at all: the order it announced
    /// is filled in at the last order's price (from the recovery; to one period after E when the billing date
    /// stays, in grace), one more for each RENEWED after it, and the episode is recovered, not lost at E + 60 days.
    @Test func recoveriesAndResumesNoFetchFollows() throws {
        var hold = try NotifiedOnly(bought: "2026-01-10T10:00:00Z", expiry: "2026-02-10T10:00:00Z")
        try hold.notify(6, "2026-02-10T10:00:00Z")
        try hold.notify(5, "2026-02-17T10:00:00Z")
        try hold.notify(1, "2026-02-25T12:00:00Z")
        try hold.notify(2, "2026-03-25T12:00:00Z")
        #expect(hold.orders == [
            "1234-5678-9012-34567 2026-01-10T10:00:00.000Z 2026-02-10T10:00:00.000Z",
            "0 2026-02-25T12:00:00.000Z 2026-03-25T12:00:00.000Z",
            "1 2026-03-25T12:00:00.000Z 2026-04-25T12:00:00.000Z",
        ])
        #expect(hold.history.periods.map(\.priceMicros) == Array(repeating: 4_990_000, count: 3))
        #expect(hold.history.episodes == [BillingEpisode(failedAt: ms("2026-02-10T10:00:00Z"), graceEnd: ms("2026-02-17T10:00:00Z"),
                                                         outcome: .recovered(at: ms("2026-02-25T12:00:00Z")))])

        var grace = try NotifiedOnly(bought: "2026-01-10T10:00:00Z", expiry: "2026-02-10T10:00:00Z")
        try grace.notify(6, "2026-02-10T10:00:00Z")
        try grace.notify(2, "2026-02-12T10:00:00Z")
        #expect(grace.orders.last == "0 2026-02-12T10:00:00.000Z 2026-03-10T10:00:00.000Z")
        // The order recovered in grace kept the billing date: the renewal after it is a month from there too.
        try grace.notify(2, "2026-03-10T10:00:00Z")
        #expect(grace.orders.suffix(2) == ["0 2026-02-12T10:00:00.000Z 2026-03-10T10:00:00.000Z",
                                           "1 2026-03-10T10:00:00.000Z 2026-04-10T10:00:00.000Z"])
        let e = ms("2026-02-10T10:00:00Z")
        #expect(grace.history.episodes == [BillingEpisode(failedAt: e, graceEnd: e + 30 * 86_400_000,
                                                          outcome: .recovered(at: ms("2026-02-12T10:00:00Z")))])

        var paused = try NotifiedOnly(bought: "2026-01-10T10:00:00Z", expiry: "2026-02-10T10:00:00Z")
        try paused.notify(10, "2026-02-10T10:00:00Z")
        try paused.notify(1, "2026-04-02T09:00:00Z")
        #expect(paused.orders.last == "0 2026-04-02T09:00:00.000Z 2026-05-02T09:00:00.000Z")
        #expect(paused.history.episodes.isEmpty)
    }

    /// Two billing issues in a row, then a pause and one more, all known only by notifications until one fetch in
    /// May: each recovery or resume starts the order it announced, so each failure is dated at the end of the
    /// order before it and each episode is its own.
    @Test func billingIssuesAndAPauseInARowKnownOnlyByNotifications() throws {
        var twice = try NotifiedOnly(bought: "2026-01-10T10:00:00Z", expiry: "2026-02-10T10:00:00Z")
        for (type, at) in [(6, "2026-02-10T10:00:00Z"), (5, "2026-02-17T10:00:00Z"), (1, "2026-02-25T12:00:00Z"),
                           (6, "2026-03-25T12:00:00Z"), (5, "2026-04-01T12:00:00Z"), (1, "2026-04-05T12:00:00Z"),
                           (2, "2026-05-05T12:00:00Z")] {
            try twice.notify(type, at)
        }
        try twice.fetch("SUBSCRIPTION_STATE_ACTIVE", at: "2026-05-20T00:00:00Z", start: "2026-01-10T10:00:00Z",
                        expiry: "2026-06-05T12:00:00Z", order: "GPA.1234-5678-9012-34567..2")
        #expect(twice.orders == [
            "1234-5678-9012-34567 2026-01-10T10:00:00.000Z 2026-02-10T10:00:00.000Z",
            "0 2026-02-25T12:00:00.000Z 2026-03-25T12:00:00.000Z",
            "1 2026-04-05T12:00:00.000Z 2026-05-05T12:00:00.000Z",
            "2 2026-05-05T12:00:00.000Z 2026-06-05T12:00:00.000Z",
        ])
        #expect(twice.history.episodes.map(\.failedAt) == [ms("2026-02-10T10:00:00Z"), ms("2026-03-25T12:00:00Z")])
        #expect(twice.history.episodes.map(\.outcome) == [.recovered(at: ms("2026-02-25T12:00:00Z")),
                                                           .recovered(at: ms("2026-04-05T12:00:00Z"))])

        var paused = try NotifiedOnly(bought: "2026-01-10T10:00:00Z", expiry: "2026-02-10T10:00:00Z")
        for (type, at) in [(10, "2026-02-10T10:00:00Z"), (1, "2026-04-02T09:00:00Z"), (6, "2026-05-02T09:00:00Z"),
                           (5, "2026-05-09T09:00:00Z"), (1, "2026-05-15T09:00:00Z")] {
            try paused.notify(type, at)
        }
        try paused.fetch("SUBSCRIPTION_STATE_ACTIVE", at: "2026-05-20T00:00:00Z", start: "2026-01-10T10:00:00Z",
                         expiry: "2026-06-15T09:00:00Z", order: "GPA.1234-5678-9012-34567..1")
        #expect(paused.orders.suffix(2) == ["0 2026-04-02T09:00:00.000Z 2026-05-02T09:00:00.000Z",
                                            "1 2026-05-15T09:00:00.000Z 2026-06-15T09:00:00.000Z"])
        #expect(paused.history.episodes == [BillingEpisode(failedAt: ms("2026-05-02T09:00:00Z"), graceEnd: ms("2026-05-09T09:00:00Z"),
                                                           outcome: .recovered(at: ms("2026-05-15T09:00:00Z")))])
    }

    /// A grace period only its notice shows, with nothing after it in the archive: still running, as long as
    /// Google's can, so that an as-of inside it counts the subscription paid whatever the archive holds later.
    @Test func aNotifiedGraceWithNoOutcomeYetRunsAsLongAsGooglesCan() throws {
        var token = try NotifiedOnly(bought: "2026-01-10T10:00:00Z", expiry: "2026-02-10T10:00:00Z")
        try token.notify(6, "2026-02-10T10:00:00Z")
        let e = ms("2026-02-10T10:00:00Z")
        #expect(token.history.episodes == [BillingEpisode(failedAt: e, graceEnd: e + 30 * 86_400_000,
                                                          outcome: .lost(at: e + 60 * 86_400_000))])
    }

    /// An expired resource showing an order only a RENEWED notice announced confirms it: paid, so no declined
    /// renewal (a v1 resource after a billing issue, `cancelReason` 1, its expiry the grace's end), and the orders
    /// before it stay, whether the resource comes with its EXPIRED notice or weeks later.
    @Test func anExpiredResourceConfirmsTheOrdersNoticesAnnounced() throws {
        var failed = try NotifiedOnly(bought: "2026-01-10T10:00:00Z", expiry: "2026-02-10T10:00:00Z")
        for (type, at) in [(2, "2026-02-10T10:00:00Z"), (2, "2026-03-10T10:00:00Z"), (6, "2026-04-10T10:00:00Z"),
                           (5, "2026-04-13T10:00:00Z"), (13, "2026-05-13T10:00:00Z")] {
            try failed.notify(type, at)
        }
        failed.archive.add(try record(.googleSubscriptionV1, v1JSON(start: ms("2026-01-10T10:00:00Z"), expiry: ms("2026-04-13T10:00:00Z"),
                                                                    orderId: "GPA.1234-5678-9012-34567..1", paymentState: nil,
                                                                    autoRenewing: false, cancelReason: 1),
                                      receivedAt: ms("2026-05-13T10:00:00Z"), token: failed.token, product: failed.product))
        #expect(failed.orders.map { $0.split(separator: " ").last ?? "" } == [
            "2026-02-10T10:00:00.000Z", "2026-03-10T10:00:00.000Z", "2026-04-10T10:00:00.000Z",
        ])
        #expect(failed.history.episodes.map(\.failedAt) == [ms("2026-04-10T10:00:00Z")])

        var cancelled = try NotifiedOnly(bought: "2026-01-10T10:00:00Z", expiry: "2026-02-10T10:00:00Z")
        try cancelled.notify(2, "2026-02-10T10:00:00Z")
        try cancelled.notify(2, "2026-03-10T10:00:00Z")
        try cancelled.notify(13, "2026-04-10T10:00:00Z")
        try cancelled.fetch("SUBSCRIPTION_STATE_EXPIRED", at: "2026-04-10T10:00:00Z", start: "2026-01-10T10:00:00Z",
                            expiry: "2026-04-10T10:00:00Z", order: "GPA.1234-5678-9012-34567..1")
        #expect(cancelled.orders == [
            "1234-5678-9012-34567 2026-01-10T10:00:00.000Z 2026-02-10T10:00:00.000Z",
            "0 2026-02-10T10:00:00.000Z 2026-03-10T10:00:00.000Z",
            "1 2026-03-10T10:00:00.000Z 2026-04-10T10:00:00.000Z",
        ])
    }

    /// The purchase's fetch missing, its SUBSCRIPTION_PURCHASED notice there: the first fetch shows `..0`, whose
    /// number proves the order before it, from `startTime` (counted as paid, and said: it may have been a free
    /// trial). Without the notice (a backfill that begins mid-life) nothing is made up before the order shown.
    @Test func theOrdersBeforeTheFirstFetchAreFilledInWhenThePurchaseIsArchived() throws {
        func archive(notified: Bool) throws -> SubscriptionHistory {
            var archive = Archive()
            if notified { try archive.rtdn("tok-p", "premium_annual", 4, at: ms("2024-01-21T00:01:00Z")) }
            try archive.rtdn("tok-p", "premium_annual", 2, at: ms("2025-01-21T00:01:00Z"))
            try archive.v2("tok-p", "premium_annual", at: ms("2025-01-21T00:01:00Z"), v2JSON(
                state: "SUBSCRIPTION_STATE_ACTIVE", start: "2024-01-21T00:01:00Z", expiry: "2026-01-21T00:01:00Z",
                latestOrderId: "GPA.3300-0000-0000-21123..0", product: "premium_annual", units: "39"))
            return GoogleHistoryBuilder().history(id: "tok-p", facts: archive.facts)
        }
        let filled = try archive(notified: true)
        #expect(filled.periods.map { "\($0.id) \(Timestamp.rfc3339($0.start)) \($0.priceMicros ?? 0) \($0.isAssumedPaid)" } == [
            "GPA.3300-0000-0000-21123 2024-01-21T00:01:00.000Z 39990000 true",
            "GPA.3300-0000-0000-21123..0 2025-01-21T00:01:00.000Z 39990000 false",
        ])
        #expect(try archive(notified: false).periods.map(\.id) == ["GPA.3300-0000-0000-21123..0"])
    }

    /// A free trial, then a renewal only its notice shows (after a trial nothing is announced), then a fetch in
    /// the pause showing that order: it ran from the trial's end to the pause, and the pause ended it.
    @Test func anOrderOnlyAPausedFetchShows() throws {
        var archive = Archive()
        try archive.v2("tok-z", "premium_monthly", at: ms("2025-05-20T13:39:00Z"), v2JSON(
            state: "SUBSCRIPTION_STATE_ACTIVE", start: "2025-05-20T13:39:00Z", expiry: "2025-05-27T13:39:00Z",
            latestOrderId: "GPA.3300-0000-0000-09432", offerPhase: #""freeTrial":{}"#))
        try archive.rtdn("tok-z", "premium_monthly", 2, at: ms("2025-05-27T13:39:00Z"))
        try archive.rtdn("tok-z", "premium_monthly", 10, at: ms("2025-06-27T13:39:00Z"))
        try archive.v2("tok-z", "premium_monthly", at: ms("2025-06-27T13:39:00Z"), v2JSON(
            state: "SUBSCRIPTION_STATE_PAUSED", start: "2025-05-20T13:39:00Z", expiry: "2025-06-27T13:39:00Z",
            latestOrderId: "GPA.3300-0000-0000-09432..0"))
        let history = GoogleHistoryBuilder().history(id: "tok-z", facts: archive.facts)
        #expect(history.periods.map { "\($0.id) \(Timestamp.rfc3339($0.start)) \(Timestamp.rfc3339($0.end)) \($0.isTrial)" } == [
            "GPA.3300-0000-0000-09432 2025-05-20T13:39:00.000Z 2025-05-27T13:39:00.000Z true",
            "GPA.3300-0000-0000-09432..0 2025-05-27T13:39:00.000Z 2025-06-27T13:39:00.000Z false",
        ])
        #expect(history.periods.last?.endReason == .paused)
    }

    /// The purchase's fetch missing: a grace notice comes while no order is known, then the recovery's fetch
    /// shows `..0`. The order before it, proven by that number and filled in from the purchase, ends where the
    /// grace notice said the renewal failed: that is the billing issue, recovered at its notice.
    @Test func aBillingIssueBeforeAnyOrderWasKnown() throws {
        /// The purchase's notice, a billing issue's (`issue`: 6 grace, 5 hold) and the recovery's, then the recovery's
        /// fetch only, showing `..0` paid to `expiry`.
        func notified(_ token: String, bought: Millis, issue: Int, failed: Millis, recovered: Millis, expiry: Millis,
                      order: String) throws -> SubscriptionHistory {
            var archive = Archive()
            try archive.rtdns(token, "premium_monthly", [(4, bought), (issue, failed), (1, recovered)])
            try archive.v1(token, "premium_monthly", at: recovered, v1JSON(start: bought, expiry: expiry, orderId: order + "..0",
                                                                          paymentState: 1, autoRenewing: true))
            return GoogleHistoryBuilder().history(id: token, facts: archive.facts)
        }
        let start = ms("2024-05-05T00:01:00Z"), e = ms("2024-06-05T00:01:00Z"), t = ms("2024-06-10T05:55:00Z")
        let history = try notified("tok-b", bought: start, issue: 6, failed: e, recovered: t, expiry: ms("2024-07-05T00:01:00Z"),
                                  order: "GPA.3300-0000-0000-16569")
        #expect(history.periods.map { "\($0.id) \(Timestamp.rfc3339($0.start)) \(Timestamp.rfc3339($0.end))" } == [
            "GPA.3300-0000-0000-16569 2024-05-05T00:01:00.000Z 2024-06-05T00:01:00.000Z",
            "GPA.3300-0000-0000-16569..0 2024-06-10T05:55:00.000Z 2024-07-05T00:01:00.000Z",
        ])
        #expect(history.episodes == [BillingEpisode(failedAt: e, graceEnd: e + 30 * 86_400_000, outcome: .recovered(at: t))])

        // Account hold without grace: the recovery moved the billing date, so the order before it runs from the
        // purchase to the failure, not back to back with the order shown.
        let bought = ms("2024-01-05T00:00:00Z"), failed = ms("2024-02-05T00:00:00Z"), recovered = ms("2024-02-15T00:00:00Z")
        let hold = try notified("tok-h", bought: bought, issue: 5, failed: failed, recovered: recovered,
                               expiry: ms("2024-03-15T00:00:00Z"), order: "GPA.3300-0000-0000-16570")
        #expect(hold.periods.map { "\(Timestamp.rfc3339($0.start)) \(Timestamp.rfc3339($0.end))" } == [
            "2024-01-05T00:00:00.000Z 2024-02-05T00:00:00.000Z", "2024-02-15T00:00:00.000Z 2024-03-15T00:00:00.000Z",
        ])
        #expect(hold.episodes == [BillingEpisode(failedAt: failed, graceEnd: failed, outcome: .recovered(at: recovered))])
    }

    /// A free trial, its renewal only a RENEWED notice shows (not filled in then: a trial's length is no billing
    /// period), then a grace notice a month later: that renewal ran to the failure, which is where the episode
    /// begins, not at the trial's end.
    @Test func aRenewalAfterATrialEndsAtTheNotifiedFailure() throws {
        var archive = Archive()
        let start = ms("2025-02-14T22:25:00Z"), trialEnd = ms("2025-02-21T22:25:00Z"), e = ms("2025-03-21T22:25:00Z")
        try archive.v1("tok-e", "premium_monthly", at: start, v1JSON(start: start, expiry: trialEnd, orderId: "GPA.3300-0000-0000-19332",
                                                                    paymentState: 2, autoRenewing: true))
        try archive.rtdn("tok-e", "premium_monthly", 2, at: trialEnd)
        try archive.rtdn("tok-e", "premium_monthly", 6, at: e)
        let history = GoogleHistoryBuilder().history(id: "tok-e", facts: archive.facts)
        #expect(history.periods.map { "\($0.id) \(Timestamp.rfc3339($0.end)) \($0.isTrial)" } == [
            "GPA.3300-0000-0000-19332 2025-02-21T22:25:00.000Z true",
            "GPA.3300-0000-0000-19332..0 2025-03-21T22:25:00.000Z false",
        ])
        #expect(history.episodes.map(\.failedAt) == [e])
    }

    /// A fetch in account hold logged just after the SUBSCRIPTION_RECOVERED notice (a stale read) is no new
    /// billing issue: the order the notice started runs on past it.
    @Test func aStaleHoldFetchAfterARecoveryIsNoNewIssue() throws {
        var token = try NotifiedOnly(bought: "2026-01-10T10:00:00Z", expiry: "2026-02-10T10:00:00Z")
        try token.notify(6, "2026-02-10T10:00:00Z")
        try token.notify(5, "2026-02-17T10:00:00Z")
        try token.notify(1, "2026-02-25T12:00:00Z")
        try token.fetch("SUBSCRIPTION_STATE_ON_HOLD", at: "2026-02-25T12:00:10Z", start: "2026-01-10T10:00:00Z",
                        expiry: "2026-02-17T10:00:00Z", order: "GPA.1234-5678-9012-34567")
        #expect(token.history.episodes == [BillingEpisode(failedAt: ms("2026-02-10T10:00:00Z"), graceEnd: ms("2026-02-17T10:00:00Z"),
                                                          outcome: .recovered(at: ms("2026-02-25T12:00:00Z")))])
    }

    /// A fetch in account hold shows the expiry grace extended access to, though no record of the grace itself
    /// was archived: that is G.
    @Test func aHoldFetchShowsTheGraceEnd() throws {
        var token = try NotifiedOnly(bought: "2025-12-28T10:00:00Z", expiry: "2026-01-28T10:00:00Z")
        try token.fetch("SUBSCRIPTION_STATE_ON_HOLD", at: "2026-02-04T12:00:00Z", start: "2025-12-28T10:00:00Z",
                        expiry: "2026-02-04T10:00:00Z", order: "GPA.1234-5678-9012-34567")
        try token.notify(1, "2026-02-12T10:00:00Z")
        try token.fetch("SUBSCRIPTION_STATE_ACTIVE", at: "2026-02-12T10:00:00Z", start: "2025-12-28T10:00:00Z",
                        expiry: "2026-03-12T10:00:00Z", order: "GPA.1234-5678-9012-34567..0")
        #expect(token.history.episodes == [BillingEpisode(failedAt: ms("2026-01-28T10:00:00Z"), graceEnd: ms("2026-02-04T10:00:00Z"),
                                                          outcome: .recovered(at: ms("2026-02-12T10:00:00Z")))])
    }

    @Test func deferralMovesTheCurrentOrdersEnd() throws {
        let token = "tok-d", product = "premium_monthly"
        let start = ms("2024-01-01T00:00:00Z"), e = ms("2024-02-01T00:00:00Z"), deferred = ms("2024-02-15T00:00:00Z")
        var archive = Archive()
        try archive.v1(token, product, at: start, v1JSON(start: start, expiry: e, orderId: "GPA.1", paymentState: 1, autoRenewing: true))
        try archive.rtdn(token, product, 9, at: start + 86_400_000)
        try archive.v1(token, product, at: start + 86_400_000, v1JSON(start: start, expiry: deferred, orderId: "GPA.1",
                                                                      paymentState: 1, autoRenewing: true))
        try archive.rtdn(token, product, 2, at: deferred)
        try archive.v1(token, product, at: deferred, v1JSON(start: start, expiry: ms("2024-03-15T00:00:00Z"), orderId: "GPA.1..0",
                                                            paymentState: 1, autoRenewing: true))
        let history = GoogleHistoryBuilder().history(id: token, facts: archive.facts)
        #expect(history.periods.map(\.start) == [start, deferred])
        #expect(history.periods.map(\.end) == [deferred, ms("2024-03-15T00:00:00Z")])
        // The deferral lengthened access, not the billing period: the month it was sold as stays, for its MRR.
        #expect(history.periods.map(\.scheduledEnd) == [e, nil])
    }
}

struct GoogleTrialTests {
    @Test func trialWhoseFirstChargeFailsAndRecoversInGrace() throws {
        let token = "tok-tg", product = "premium_monthly"
        let start = ms("2024-01-01T00:00:00Z"), trialEnd = ms("2024-01-08T00:00:00Z"), g = ms("2024-01-11T00:00:00Z")
        let t = ms("2024-01-09T15:30:00Z"), paidEnd = ms("2024-02-08T00:00:00Z")
        var archive = Archive()
        try archive.rtdn(token, product, 4, at: start)
        try archive.v1(token, product, at: start, v1JSON(start: start, expiry: trialEnd, orderId: "GPA.8", paymentState: 2, autoRenewing: true))
        try archive.rtdn(token, product, 6, at: trialEnd)
        try archive.v1(token, product, at: trialEnd, v1JSON(start: start, expiry: g, orderId: "GPA.8", paymentState: 0, autoRenewing: true))
        try archive.rtdn(token, product, 1, at: t)
        try archive.v2(token, product, at: t, v2JSON(state: "SUBSCRIPTION_STATE_ACTIVE", start: "2024-01-01T00:00:00Z",
                                                     expiry: "2024-02-08T00:00:00Z", latestOrderId: "GPA.8..0"))
        let history = GoogleHistoryBuilder().history(id: token, facts: archive.facts)
        #expect(history.periods.map(\.isTrial) == [true, false])
        #expect(history.periods.map(\.start) == [start, t])
        #expect(history.periods.map(\.end) == [trialEnd, paidEnd])
        #expect(history.episodes == [BillingEpisode(failedAt: trialEnd, graceEnd: g, outcome: .recovered(at: t))])
    }
}

/// Orders the archive shows only after they ended: an EXPIRED resource (v1 fetched past its expiry, v2
/// `SUBSCRIPTION_STATE_EXPIRED`) is all there is of them, as in a backfill that fetched every token's final state.
struct GoogleEndedOrderTests {
    let token = "tok-x", product = "premium_monthly"
    let start = ms("2024-01-01T00:00:00Z"), expiry = ms("2024-03-01T00:00:00Z"), fetched = ms("2024-03-20T12:00:00Z")

    func history(_ json: String, source: SourceKind = .googleSubscriptionV1, receivedAt: Millis?) throws -> SubscriptionHistory {
        var archive = Archive()
        archive.add(try record(source, json, receivedAt: receivedAt, token: token, product: product))
        #expect(archive.failures.isEmpty)
        return GoogleHistoryBuilder().history(id: token, facts: archive.facts)
    }

    @Test func renewalFetchedAfterItsExpiryIsAPaidPeriod() throws {
        // `..0` is the second order: a renewal, so paid (v1 states no paymentState once expired).
        let history = try history(v1JSON(start: start, expiry: expiry, orderId: "GPA.5..0", paymentState: nil,
                                         autoRenewing: false, cancelReason: 0), receivedAt: fetched)
        #expect(history.periods == [Period(id: "GPA.5..0", productId: product, start: ms("2024-02-01T00:00:00Z"), end: expiry,
                                           priceMicros: 4_990_000, currency: "USD", endReason: .voluntary)])
    }

    @Test func systemCancellationShowsTheRenewalThatWasNeverPaid() throws {
        // Fetched at the purchase, then after account hold ran out: the order shown is the failed renewal.
        let e = ms("2024-02-01T00:00:00Z"), g = ms("2024-02-08T00:00:00Z")
        var archive = Archive()
        try archive.v1(token, product, at: start, v1JSON(start: start, expiry: e, orderId: "GPA.5", paymentState: 1, autoRenewing: true))
        archive.add(try record(.googleSubscriptionV1, v1JSON(start: start, expiry: g, orderId: "GPA.5..0", paymentState: nil,
                                                             autoRenewing: false, cancelReason: 1),
                               receivedAt: fetched, token: token, product: product))
        let history = GoogleHistoryBuilder().history(id: token, facts: archive.facts)
        #expect(history.periods.map(\.id) == ["GPA.5"])
        #expect(history.periods.map(\.endReason) == [.billingIssue])
        #expect(history.episodes.isEmpty)
        // The same resource alone proves no paid order.
        let alone = try self.history(v1JSON(start: start, expiry: g, orderId: "GPA.5..0", paymentState: nil,
                                            autoRenewing: false, cancelReason: 1), receivedAt: fetched)
        #expect(alone.periods.isEmpty)
    }

    /// Fetched at the purchase, then only once the system cancelled it after account hold, showing the renewal it
    /// could not charge (`GPA.5..2`): that number proves `..0` and `..1` paid, though only RTDNs (or nothing)
    /// came in between. They are the months from February to April, and the billing issue began at April 1,
    /// whether RENEWED notifications announced them, only the grace, hold and expiry were notified, or nothing.
    @Test(arguments: [[2, 2, 6, 5, 13], [6, 5, 13], []])
    func aDeclinedRenewalProvesTheRenewalsBeforeIt(_ notified: [Int]) throws {
        let times = ["2024-02-01T00:00:00Z", "2024-03-01T00:00:00Z", "2024-04-01T00:00:00Z", "2024-04-04T00:00:00Z",
                     "2024-05-04T00:00:00Z"].suffix(notified.count)
        var archive = Archive()
        try archive.v1(token, product, at: start + 60_000, v1JSON(start: start, expiry: ms("2024-02-01T00:00:00Z"), orderId: "GPA.5",
                                                                 paymentState: 1, autoRenewing: true))
        for (type, at) in zip(notified, times) { try archive.rtdn(token, product, type, at: ms(at)) }
        archive.add(try record(.googleSubscriptionV1, v1JSON(start: start, expiry: ms("2024-05-04T00:00:00Z"), orderId: "GPA.5..2",
                                                             paymentState: nil, autoRenewing: false, cancelReason: 1),
                               receivedAt: ms("2024-05-05T00:00:00Z"), token: token, product: product))
        let history = GoogleHistoryBuilder().history(id: token, facts: archive.facts)
        #expect(history.periods.map { "\($0.id) \(Timestamp.rfc3339($0.start)) \(Timestamp.rfc3339($0.end)) \($0.priceMicros ?? 0)" } == [
            "GPA.5 2024-01-01T00:00:00.000Z 2024-02-01T00:00:00.000Z 4990000",
            "GPA.5..0 2024-02-01T00:00:00.000Z 2024-03-01T00:00:00.000Z 4990000",
            "GPA.5..1 2024-03-01T00:00:00.000Z 2024-04-01T00:00:00.000Z 4990000",
        ])
        #expect(history.periods.map(\.endReason) == [.unknown, .unknown, .billingIssue])
        let april = ms("2024-04-01T00:00:00Z")
        #expect(history.episodes == (notified.isEmpty ? [] : [
            BillingEpisode(failedAt: april, graceEnd: ms("2024-04-04T00:00:00Z"), outcome: .lost(at: ms("2024-05-04T00:00:00Z"))),
        ]))
    }

    /// After a 7-day free trial the trial's length says nothing of the plan's: the renewals a declined `..2` proves
    /// run a month each, the period that puts the failure where the resource's expiry shows it. A later resource
    /// showing an older order leaves them (a number proves them, no notice announced them). A grace only its
    /// notice showed ends at the loss, from the failure as the declined order finally places it.
    @Test func aDeclinedRenewalAfterATrial() throws {
        var archive = Archive()
        try archive.v1(token, product, at: start + 60_000, v1JSON(start: start, expiry: ms("2024-01-08T00:00:00Z"), orderId: "GPA.5",
                                                                 paymentState: 2, autoRenewing: true))
        try archive.rtdn(token, product, 6, at: ms("2024-03-08T00:00:00Z"))
        try archive.rtdn(token, product, 13, at: ms("2024-03-15T00:00:00Z"))
        archive.add(try record(.googleSubscriptionV1, v1JSON(start: start, expiry: ms("2024-03-15T00:00:00Z"), orderId: "GPA.5..2",
                                                             paymentState: nil, autoRenewing: false, cancelReason: 1),
                               receivedAt: ms("2024-03-20T00:00:00Z"), token: token, product: product))
        let expected = [
            "GPA.5 2024-01-01T00:00:00.000Z 2024-01-08T00:00:00.000Z",
            "GPA.5..0 2024-01-08T00:00:00.000Z 2024-02-08T00:00:00.000Z",
            "GPA.5..1 2024-02-08T00:00:00.000Z 2024-03-08T00:00:00.000Z",
        ]
        func orders(_ history: SubscriptionHistory) -> [String] {
            history.periods.map { "\($0.id) \(Timestamp.rfc3339($0.start)) \(Timestamp.rfc3339($0.end))" }
        }
        let history = GoogleHistoryBuilder().history(id: token, facts: archive.facts)
        #expect(orders(history) == expected)
        #expect(history.episodes == [BillingEpisode(failedAt: ms("2024-03-08T00:00:00Z"), graceEnd: ms("2024-03-15T00:00:00Z"),
                                                    outcome: .lost(at: ms("2024-03-15T00:00:00Z")))])
        // A later v2 fetch showing `..1`, the latest paid order, changes none of it.
        try archive.v2(token, product, at: ms("2024-03-21T00:00:00Z"), v2JSON(
            state: "SUBSCRIPTION_STATE_EXPIRED", start: "2024-01-01T00:00:00Z", expiry: "2024-03-08T00:00:00Z",
            latestOrderId: "GPA.5..1", autoRenew: false, units: "4", nanos: 990_000_000,
            extra: #""canceledStateContext":{"systemInitiatedCancellation":{}},"#))
        #expect(orders(GoogleHistoryBuilder().history(id: token, facts: archive.facts)) == expected)
    }

    /// A first order seen only once expired states no payment (Google drops `paymentState`): it is paid, as
    /// metrics.md counts every period not shown as a trial and as the same resource fetched before its expiry
    /// counts it, but marked as assumed, since an unconverted free trial looks the same. A pending payment, or a
    /// stated free trial, is no assumption.
    @Test func firstOrderWithoutAPaymentStateIsAssumedPaid() throws {
        let json = v1JSON(start: start, expiry: expiry, orderId: "GPA.6", paymentState: nil, autoRenewing: false, cancelReason: 0)
        let expired = try history(json, receivedAt: fetched)
        var paid = Period(id: "GPA.6", productId: product, start: start, end: expiry, priceMicros: 4_990_000, currency: "USD",
                          endReason: .voluntary)
        paid.isAssumedPaid = true
        #expect(expired.periods == [paid])
        // The same resource fetched before the expiry, or logged without a fetch time: the same period, unmarked.
        for receivedAt in [ms("2024-02-20T00:00:00Z"), nil] {
            #expect(try history(json, receivedAt: receivedAt).periods.map { "\($0.id) \($0.start) \($0.end) \($0.isAssumedPaid)" }
                    == ["GPA.6 \(start) \(expiry) false"])
        }
        let pending = try history(v1JSON(start: start, expiry: expiry, orderId: "GPA.6", paymentState: 0, autoRenewing: false,
                                         cancelReason: 1), receivedAt: fetched)
        #expect(pending.periods.isEmpty)
        // A deferred change that never took effect (`paymentState` 3) granted nothing either.
        let deferred = try history(v1JSON(start: start, expiry: expiry, orderId: "GPA.6", paymentState: 3, autoRenewing: false),
                                   receivedAt: fetched)
        #expect(deferred.periods.isEmpty)
        let trial = try history(v1JSON(start: start, expiry: ms("2024-01-08T00:00:00Z"), orderId: "GPA.6", paymentState: 2,
                                       autoRenewing: false, cancelReason: 0), receivedAt: fetched)
        #expect(trial.periods.map { "\($0.isTrial) \($0.isAssumedPaid)" } == ["true false"])
    }

    @Test func bareV2ExpiredResourceWithABasePricePhase() throws {
        let json = v2JSON(state: "SUBSCRIPTION_STATE_EXPIRED", start: "2024-01-01T00:00:00Z", expiry: "2024-02-01T00:00:00Z",
                          latestOrderId: "GPA.7", autoRenew: false,
                          extra: "\"canceledStateContext\":{\"userInitiatedCancellation\":{\"cancelTime\":\"2024-01-20T08:00:00Z\"}},")
        let history = try history(json, source: .googleSubscriptionV2, receivedAt: nil)
        #expect(history.periods == [Period(id: "GPA.7", productId: product, start: start, end: ms("2024-02-01T00:00:00Z"),
                                           priceMicros: 4_990_000, currency: "USD", endReason: .voluntary)])
    }

    @Test func aSystemCancelWithAPriceIncreasePendingIsADeclinedIncrease() throws {
        var archive = Archive()
        try archive.v1(token, product, at: ms("2024-02-01T00:00:00Z"),
                       v1JSON(start: start, expiry: expiry, orderId: "GPA.5..0", paymentState: 1, autoRenewing: true))
        let declined = String(v1JSON(start: start, expiry: expiry, orderId: "GPA.5..1", paymentState: nil, autoRenewing: false,
                                     cancelReason: 1).dropLast())
            + #","priceChange":{"newPrice":{"priceMicros":"6990000","currency":"USD"},"state":0}}"#
        archive.add(try record(.googleSubscriptionV1, declined, receivedAt: fetched, token: token, product: product))
        #expect(archive.failures.isEmpty)
        let history = GoogleHistoryBuilder().history(id: token, facts: archive.facts)
        #expect(history.periods.map(\.id) == ["GPA.5..0"])
        #expect(history.periods.map(\.endReason) == [.priceIncrease])
    }

    /// A backfill logged its resources without a fetch time: their times are lower bounds (the order's start),
    /// earlier than the CANCELED notification they were fetched after. The reason one states (3, the developer)
    /// is still the reason in force at the notification, not a user's cancellation.
    @Test func anUndatedResourceGivesTheReasonOfACancellationNotification() throws {
        let start = ms("2024-04-27T20:00:00Z"), expiry = ms("2024-05-04T20:00:00Z")
        var archive = Archive()
        try archive.rtdn(token, product, 4, at: start)
        archive.add(try record(.googleSubscriptionV1, v1JSON(start: start, expiry: expiry, orderId: "GPA.9", paymentState: 1,
                                                             autoRenewing: true), token: token, product: product))
        try archive.rtdn(token, product, 3, at: ms("2024-04-30T13:00:00Z"))
        archive.add(try record(.googleSubscriptionV1, v1JSON(start: start, expiry: expiry, orderId: "GPA.9", paymentState: 1,
                                                             autoRenewing: false, cancelReason: 3), token: token, product: product))
        try archive.rtdn(token, product, 13, at: expiry)
        #expect(archive.failures.isEmpty)
        let history = GoogleHistoryBuilder().history(id: token, facts: archive.facts)
        #expect(history.periods.map(\.endReason) == [.developerCancel])
    }

    @Test func expiredResourceOfAKnownOrderGivesItsReason() throws {
        // Fetched at the renewal (auto-renewing), then after the end: the user had cancelled (0).
        var archive = Archive()
        try archive.v1(token, product, at: ms("2024-02-01T00:00:00Z"),
                       v1JSON(start: start, expiry: expiry, orderId: "GPA.5..0", paymentState: 1, autoRenewing: true))
        archive.add(try record(.googleSubscriptionV1, v1JSON(start: start, expiry: expiry, orderId: "GPA.5..0", paymentState: nil,
                                                             autoRenewing: false, cancelReason: 0),
                               receivedAt: fetched, token: token, product: product))
        let history = GoogleHistoryBuilder().history(id: token, facts: archive.facts)
        #expect(history.periods.map(\.end) == [expiry])
        #expect(history.periods.map(\.endReason) == [.voluntary])
    }
}

/// Where an order the archive first shows mid-life begins, and the orders between two fetched ones that no
/// resource showed.
struct GoogleOrderPlacementTests {
    let product = "premium_monthly"

    @Test func aRenewalFirstSeenMidLifeBeganOnePeriodBeforeItsExpiry() throws {
        // The archive begins in March 2024; the subscription started in September 2023. `..5` is the seventh order.
        let start = ms("2023-09-10T10:00:00Z"), expiry = ms("2024-04-10T10:00:00Z")
        var archive = Archive()
        try archive.v1("tok-m", product, at: ms("2024-03-28T12:00:00Z"),
                       v1JSON(start: start, expiry: expiry, orderId: "GPA.18..5", paymentState: 1, autoRenewing: true))
        let history = GoogleHistoryBuilder().history(id: "tok-m", facts: archive.facts)
        #expect(history.periods.map(\.start) == [ms("2024-03-10T10:00:00Z")])
        #expect(history.periods.map(\.end) == [expiry])
    }

    @Test func aStatedCancellationDoesNotDateTheOrder() throws {
        // A backfill's bare v2 resource: cancelled on 04-09, a day before the order it shows ends.
        let json = v2JSON(state: "SUBSCRIPTION_STATE_CANCELED", start: "2024-01-10T10:00:00Z", expiry: "2024-04-10T10:00:00Z",
                          latestOrderId: "GPA.13..1", autoRenew: false,
                          extra: #""canceledStateContext":{"userInitiatedCancellation":{"cancelTime":"2024-04-09T10:00:00Z"}},"#)
        var archive = Archive()
        archive.add(try record(.googleSubscriptionV2, json, token: "tok-c", product: product))
        let history = GoogleHistoryBuilder().history(id: "tok-c", facts: archive.facts)
        #expect(history.periods.map(\.start) == [ms("2024-03-10T10:00:00Z")])
        #expect(history.periods.map(\.endReason) == [.voluntary])
    }

    @Test func ordersNoFetchShowedAreFilledInBetween() throws {
        // Fetched at the purchase and after the cancellation; the renewals of 02-05 and 03-05 came as RTDNs only.
        let start = ms("2024-01-05T00:00:00Z")
        var archive = Archive()
        try archive.rtdn("tok-g", product, 4, at: start)
        try archive.v1("tok-g", product, at: start, v1JSON(start: start, expiry: ms("2024-02-05T00:00:00Z"), orderId: "GPA.11",
                                                        paymentState: 1, autoRenewing: true))
        try archive.rtdn("tok-g", product, 2, at: ms("2024-02-05T00:00:00Z"))
        try archive.rtdn("tok-g", product, 2, at: ms("2024-03-05T00:00:00Z"))
        try archive.rtdn("tok-g", product, 3, at: ms("2024-03-20T00:00:00Z"))
        try archive.v1("tok-g", product, at: ms("2024-03-20T00:00:00Z"),
                       v1JSON(start: start, expiry: ms("2024-04-05T00:00:00Z"), orderId: "GPA.11..1", paymentState: 1,
                              autoRenewing: false, cancelReason: 0, priceMicros: "5990000"))
        let history = GoogleHistoryBuilder().history(id: "tok-g", facts: archive.facts)
        #expect(history.periods.map(\.id) == ["GPA.11", "GPA.11..0", "GPA.11..1"])
        #expect(history.periods.map(\.start) == [start, ms("2024-02-05T00:00:00Z"), ms("2024-03-05T00:00:00Z")])
        #expect(history.periods.map(\.end) == [ms("2024-02-05T00:00:00Z"), ms("2024-03-05T00:00:00Z"), ms("2024-04-05T00:00:00Z")])
        // The missing order is charged the subscription's recurring price, as the next resource states it.
        #expect(history.periods.map(\.priceMicros) == [4_990_000, 5_990_000, 5_990_000])
        #expect(history.periods.last?.endReason == .voluntary)
    }

    @Test func aHostileOrderNumberFillsNothing() throws {
        let start = ms("2024-01-05T00:00:00Z")
        var archive = Archive()
        try archive.v1("tok-h", product, at: start, v1JSON(start: start, expiry: ms("2024-02-05T00:00:00Z"), orderId: "GPA.12",
                                                        paymentState: 1, autoRenewing: true))
        try archive.v1("tok-h", product, at: ms("2024-02-05T00:00:00Z"),
                       v1JSON(start: start, expiry: ms("2024-03-05T00:00:00Z"), orderId: "GPA.12..9223372036854775806",
                              paymentState: 1, autoRenewing: true))
        let history = GoogleHistoryBuilder().history(id: "tok-h", facts: archive.facts)
        #expect(history.periods.count == 2)
        // Two huge numbers in a row (the sums of positions must not overflow).
        for (first, second) in [("GPA.12..9223372036854775806", "GPA.12..1"),
                                ("GPA.12..9223372036854775800", "GPA.12..9223372036854775806")] {
            var pair = Archive()
            try pair.v1("tok-h", product, at: start, v1JSON(start: start, expiry: ms("2024-02-05T00:00:00Z"), orderId: first,
                                                         paymentState: 1, autoRenewing: true))
            try pair.v1("tok-h", product, at: ms("2024-02-05T00:00:00Z"),
                        v1JSON(start: start, expiry: ms("2024-03-05T00:00:00Z"), orderId: second, paymentState: 1, autoRenewing: true))
            #expect(GoogleHistoryBuilder().history(id: "tok-h", facts: pair.facts).periods.count == 2)
        }
    }
}

/// What a resource says about the orders it names: v2's latest successful order is paid; a subscription sold
/// with an offer leaves the price of orders no resource showed unknown.
struct GoogleShownOrderTests {
    let product = "premium_monthly"

    @Test func v2sLatestSuccessfulOrderIsPaidEvenAfterASystemCancel() throws {
        // `latestOrderId` is deprecated: a final state without it names the last paid order.
        let json = v2JSON(state: "SUBSCRIPTION_STATE_EXPIRED", start: "2024-01-10T10:00:00Z", expiry: "2024-03-10T10:00:00Z",
                          latestOrderId: "GPA.31..0", autoRenew: false,
                          extra: #""canceledStateContext":{"systemInitiatedCancellation":{}},"#)
            .replacingOccurrences(of: #""latestOrderId":"GPA.31..0","#, with: "")
        var archive = Archive()
        archive.add(try record(.googleSubscriptionV2, json, receivedAt: ms("2024-04-20T00:00:00Z"), token: "tok-s", product: product))
        #expect(archive.failures.isEmpty)
        let history = GoogleHistoryBuilder().history(id: "tok-s", facts: archive.facts)
        #expect(history.periods.map(\.id) == ["GPA.31..0"])
        #expect(history.periods.map(\.start) == [ms("2024-02-10T10:00:00Z")])
        #expect(history.periods.map(\.endReason) == [.billingIssue])
    }

    /// Google added `offerPhase` to v2 resources in January 2026: one fetched before shows a running first order
    /// without saying whether it is a free trial, so the order is assumed paid; its renewal `..N` is proven. A v1
    /// fetch of the same order stating `paymentState` 1 proves it, whichever came first; a v2 one with an offer
    /// phase is proof from the start.
    @Test func aV2FirstOrderWithoutAnOfferPhaseIsAnAssumedPayment() throws {
        func bare(_ expiry: String, _ order: String) -> String {
            v2JSON(state: "SUBSCRIPTION_STATE_ACTIVE", start: "2024-06-10T10:00:00Z", expiry: expiry, latestOrderId: order)
                .replacingOccurrences(of: #","offerPhase":{"basePrice":{}}"#, with: "")
        }
        var archive = Archive()
        try archive.v2("tok-b", product, at: ms("2024-06-10T10:00:00Z"), bare("2024-06-17T10:00:00Z", "GPA.40"))
        try archive.v2("tok-b", product, at: ms("2024-06-17T10:00:00Z"), bare("2024-07-17T10:00:00Z", "GPA.40..0"))
        let history = GoogleHistoryBuilder().history(id: "tok-b", facts: archive.facts)
        #expect(history.periods.map(\.id) == ["GPA.40", "GPA.40..0"])
        #expect(history.periods.map(\.isAssumedPaid) == [true, false])
        #expect(history.periods.map(\.isTrial) == [false, false])

        try archive.v1("tok-b", product, at: ms("2024-06-11T10:00:00Z"),
                       v1JSON(start: ms("2024-06-10T10:00:00Z"), expiry: ms("2024-06-17T10:00:00Z"), orderId: "GPA.40",
                              paymentState: 1, autoRenewing: true))
        #expect(GoogleHistoryBuilder().history(id: "tok-b", facts: archive.facts).periods.map(\.isAssumedPaid) == [false, false])

        var phased = Archive()
        try phased.v2("tok-p", product, at: ms("2024-06-10T10:00:00Z"),
                      v2JSON(state: "SUBSCRIPTION_STATE_ACTIVE", start: "2024-06-10T10:00:00Z", expiry: "2024-07-10T10:00:00Z",
                             latestOrderId: "GPA.41"))
        #expect(GoogleHistoryBuilder().history(id: "tok-p", facts: phased.facts).periods.map(\.isAssumedPaid) == [false])

        // A token that continues another (an upgrade whose old token the archive may not hold) starts with a change
        // of plan's order, never a new subscriber's free trial: not assumed.
        var linked = Archive()
        try linked.v2("tok-l", product, at: ms("2024-06-10T10:00:00Z"),
                      v2JSON(state: "SUBSCRIPTION_STATE_ACTIVE", start: "2024-06-10T10:00:00Z", expiry: "2024-06-30T10:00:00Z",
                             latestOrderId: "GPA.42", extra: #""linkedPurchaseToken":"tok-gone","#)
                        .replacingOccurrences(of: #","offerPhase":{"basePrice":{}}"#, with: ""))
        #expect(GoogleHistoryBuilder().history(id: "tok-l", facts: linked.facts).periods.map(\.isAssumedPaid) == [false])
    }

    @Test func anUnconvertedTrialsLatestSuccessfulOrderIsAnAssumedPayment() throws {
        // The trial's $0 order is the latest successful one; once expired, v2 states no offer phase: nothing tells
        // it from a paid order, so it is assumed paid (the report, given the product's duration, finds it too
        // short for one: ``MetricsEngine/trialsByLength``).
        let json = v2JSON(state: "SUBSCRIPTION_STATE_EXPIRED", start: "2024-01-10T10:00:00Z", expiry: "2024-01-17T10:00:00Z",
                          latestOrderId: "GPA.32", autoRenew: false,
                          extra: #""canceledStateContext":{"userInitiatedCancellation":{"cancelTime":"2024-01-12T08:00:00Z"}},"#)
            .replacingOccurrences(of: #""latestOrderId":"GPA.32","#, with: "")
            .replacingOccurrences(of: #","offerPhase":{"basePrice":{}}"#, with: "")
        var archive = Archive()
        archive.add(try record(.googleSubscriptionV2, json, receivedAt: ms("2024-02-01T00:00:00Z"), token: "tok-t", product: product))
        #expect(archive.failures.isEmpty)
        #expect(GoogleHistoryBuilder().history(id: "tok-t", facts: archive.facts).periods.map { "\($0.id) \($0.isTrial) \($0.isAssumedPaid)" }
                == ["GPA.32 false true"])
    }

    @Test func ordersMissingFromAnOfferedSubscriptionArePricedByTheirCycle() throws {
        // Three cycles at 0.99: `GPA.41`, `..0` and `..1` were introductory, `..2` (the fourth order) is not, so
        // the missing orders are priced by their position among the stated cycles, not like it.
        let start = ms("2024-01-05T00:00:00Z")
        let intro = #","introductoryPriceInfo":{"introductoryPriceCurrencyCode":"USD","introductoryPriceAmountMicros":"990000","introductoryPriceCycles":3,"introductoryPricePeriod":"P1M"}}"#
        var archive = Archive()
        try archive.v1("tok-i", product, at: start, String(v1JSON(start: start, expiry: ms("2024-02-05T00:00:00Z"), orderId: "GPA.41",
                                                                  paymentState: 1, autoRenewing: true).dropLast()) + intro)
        try archive.v1("tok-i", product, at: ms("2024-04-05T00:00:00Z"),
                       String(v1JSON(start: start, expiry: ms("2024-05-05T00:00:00Z"), orderId: "GPA.41..2", paymentState: 1,
                                     autoRenewing: true).dropLast()) + intro)
        #expect(archive.failures.isEmpty)
        let history = GoogleHistoryBuilder().history(id: "tok-i", facts: archive.facts)
        #expect(history.periods.map(\.id) == ["GPA.41", "GPA.41..0", "GPA.41..1", "GPA.41..2"])
        #expect(history.periods.map(\.priceMicros) == [990_000, 990_000, 990_000, 4_990_000])
        #expect(history.periods.map(\.isIntroductory) == [true, true, true, false])
    }

    /// A legacy product with a free trial and an introductory price: the trial comes first and is no billing
    /// period, so the introductory cycles are the paid orders after it (Google: "the number of billing periods to
    /// offer introductory pricing"). A yearly plan, a 7-day trial and one cycle: `..0` costs 29.99, `..1` 59.99;
    /// without the trial, `..0` is already past the one cycle.
    @Test func introductoryCyclesFollowAFreeTrial() throws {
        let start = ms("2024-02-14T10:00:00Z"), trialEnd = ms("2024-02-21T10:00:00Z")
        let intro = #","introductoryPriceInfo":{"introductoryPriceCurrencyCode":"USD","introductoryPriceAmountMicros":"29990000","introductoryPriceCycles":1,"introductoryPricePeriod":"P1Y"}}"#
        func resource(_ start: Millis, _ expiry: Millis, _ order: String, _ paymentState: Int) -> String {
            String(v1JSON(start: start, expiry: expiry, orderId: order, paymentState: paymentState, autoRenewing: true,
                          priceMicros: "59990000").dropLast()) + intro
        }
        var withTrial = Archive()
        try withTrial.v1("tok-ti", "yearly", at: start, resource(start, trialEnd, "GPA.51", 2))
        try withTrial.v1("tok-ti", "yearly", at: trialEnd, resource(start, ms("2025-02-21T10:00:00Z"), "GPA.51..0", 1))
        try withTrial.v1("tok-ti", "yearly", at: ms("2025-02-21T10:00:00Z"), resource(start, ms("2026-02-21T10:00:00Z"), "GPA.51..1", 1))
        // Without a trial: the first order is the one introductory cycle.
        var withoutTrial = Archive()
        try withoutTrial.v1("tok-ni", "yearly", at: start, resource(start, ms("2025-02-14T10:00:00Z"), "GPA.52", 1))
        try withoutTrial.v1("tok-ni", "yearly", at: ms("2025-02-14T10:00:00Z"), resource(start, ms("2026-02-14T10:00:00Z"), "GPA.52..0", 1))
        #expect(withTrial.failures.isEmpty && withoutTrial.failures.isEmpty)
        let trialFirst = GoogleHistoryBuilder().history(id: "tok-ti", facts: withTrial.facts)
        #expect(trialFirst.periods.map { "\($0.id) \($0.isTrial) \($0.isIntroductory) \($0.priceMicros ?? -1)" }
                == ["GPA.51 true false 0", "GPA.51..0 false true 29990000", "GPA.51..1 false false 59990000"])
        let noTrial = GoogleHistoryBuilder().history(id: "tok-ni", facts: withoutTrial.facts)
        #expect(noTrial.periods.map { "\($0.id) \($0.isIntroductory) \($0.priceMicros ?? -1)" }
                == ["GPA.52 true 29990000", "GPA.52..0 false 59990000"])
        // A month's trial on a monthly plan looks like a billing period in every later resource; the trial order
        // a resource showed says what the times cannot.
        let monthly = #","introductoryPriceInfo":{"introductoryPriceCurrencyCode":"USD","introductoryPriceAmountMicros":"1990000","introductoryPriceCycles":1,"introductoryPricePeriod":"P1M"}}"#
        func monthlyResource(_ expiry: Millis, _ order: String, _ paymentState: Int) -> String {
            String(v1JSON(start: ms("2024-01-01T00:00:00Z"), expiry: expiry, orderId: order, paymentState: paymentState,
                          autoRenewing: true, priceMicros: "4990000").dropLast()) + monthly
        }
        var monthTrial = Archive()
        try monthTrial.v1("tok-mt", "monthly", at: ms("2024-01-01T00:00:00Z"), monthlyResource(ms("2024-02-01T00:00:00Z"), "GPA.53", 2))
        try monthTrial.v1("tok-mt", "monthly", at: ms("2024-02-01T00:00:00Z"), monthlyResource(ms("2024-03-01T00:00:00Z"), "GPA.53..0", 1))
        try monthTrial.v1("tok-mt", "monthly", at: ms("2024-03-01T00:00:00Z"), monthlyResource(ms("2024-04-01T00:00:00Z"), "GPA.53..1", 1))
        #expect(monthTrial.failures.isEmpty)
        #expect(GoogleHistoryBuilder().history(id: "tok-mt", facts: monthTrial.facts).periods
                    .map { "\($0.id) \($0.isTrial) \($0.isIntroductory) \($0.priceMicros ?? -1)" }
                == ["GPA.53 true false 0", "GPA.53..0 false true 1990000", "GPA.53..1 false false 4990000"])
        // A first order shown paid was the one cycle; the next, longer for a pause, is at the list price.
        var paused = Archive()
        try paused.v1("tok-pa", "monthly", at: ms("2024-01-01T00:00:00Z"), monthlyResource(ms("2024-02-01T00:00:00Z"), "GPA.54", 1))
        try paused.v1("tok-pa", "monthly", at: ms("2024-02-01T00:00:00Z"), monthlyResource(ms("2024-04-01T00:00:00Z"), "GPA.54..0", 1))
        #expect(paused.failures.isEmpty)
        #expect(GoogleHistoryBuilder().history(id: "tok-pa", facts: paused.facts).periods.map { "\($0.id) \($0.isIntroductory) \($0.priceMicros ?? -1)" }
                == ["GPA.54 true 1990000", "GPA.54..0 false 4990000"])
    }

    /// A system cancellation while a price step-up awaits the user's consent (`priceStepUpConsentDetails` PENDING,
    /// 2025) declined the increase, as one with `priceChangeDetails` OUTSTANDING does: not a billing issue. Once
    /// consented (CONFIRMED), the same cancellation is the system's.
    @Test func aSystemCancelWithAStepUpPendingIsADeclinedIncrease() throws {
        func endReason(consent: String) throws -> [EndReason] {
            let stepUp = #""priceStepUpConsentDetails":{"state":"\#(consent)","consentDeadlineTime":"2024-02-01T00:00:00Z","newPrice":{"currencyCode":"USD","units":"6","nanos":990000000}},"#
            let json = v2JSON(state: "SUBSCRIPTION_STATE_CANCELED", start: "2024-01-01T00:00:00Z", expiry: "2024-02-01T00:00:00Z",
                              latestOrderId: "GPA.61", autoRenew: false,
                              extra: #""canceledStateContext":{"systemInitiatedCancellation":{}},"#)
                .replacingOccurrences(of: #""autoRenewEnabled":false,"#, with: #""autoRenewEnabled":false,\#(stepUp)"#)
            var archive = Archive()
            try archive.v2("tok-su", product, at: ms("2024-01-25T00:00:00Z"), json)
            #expect(archive.failures.isEmpty)
            return GoogleHistoryBuilder().history(id: "tok-su", facts: archive.facts).periods.map(\.endReason)
        }
        #expect(try endReason(consent: "PENDING") == [.priceIncrease])
        #expect(try endReason(consent: "CONFIRMED") == [.billingIssue])
    }

    /// A prepaid plan (`prepaidPlan`, no `autoRenewingPlan`) is ACTIVE until it expires and never renews: its end
    /// is the user's choice, like a cancelled plan's, not an unknown one.
    @Test func aPrepaidPlanEndsVoluntarily() throws {
        let json = v2JSON(state: active, start: "2024-01-01T00:00:00Z", expiry: "2024-02-01T00:00:00Z", latestOrderId: "GPA.71")
            .replacingOccurrences(of: #""autoRenewingPlan":{"autoRenewEnabled":true,"recurringPrice":{"currencyCode":"USD","units":"4","nanos":990000000}},"#,
                                  with: #""prepaidPlan":{"allowExtendAfterTime":"2024-01-25T00:00:00Z"},"#)
        #expect(json.contains("prepaidPlan") && !json.contains("autoRenewingPlan"))
        var archive = Archive()
        try archive.v2("tok-pp", product, at: ms("2024-01-01T00:00:00Z"), json)
        #expect(archive.failures.isEmpty)
        let history = GoogleHistoryBuilder().history(id: "tok-pp", facts: archive.facts)
        #expect(history.periods.map { "\($0.id) \($0.end) \($0.endReason)" } == ["GPA.71 \(ms("2024-02-01T00:00:00Z")) voluntary"])
    }
}

import Facts
import Ingest
@testable import PlayStore
import Testing

private let translator = PlayStoreTranslator(packageNames: [package], times: testTimes)
private let builder = GoogleHistoryBuilder()
private let day: Millis = 86_400_000

/// Google Play data as it exists in the wild (issue 13, inputs.md): test purchases whose RTDNs arrive on their
/// own, resources exported without a fetch time, containers sent as `{}` or `null`, and times no store sends
/// (issue 18). Payload shapes follow Google's androidpublisher v3 reference (`purchases.subscriptions`,
/// `purchases.subscriptionsv2`, `purchases.products`, `purchases.voidedpurchases`) and the RTDN reference.
struct TestPurchaseTokenTests {
    static let token = "kdpmhhfbkoinbmjjakiedgcp.AO-J1OyRsnlnGp9TSZtrZmfQ3p9kuvpTMNb1zUgsx8Dn6dTVyr0ByanvLm4"

    /// A one-time product bought by a license tester: `purchases.products.get` says `purchaseType: 0`; its
    /// `oneTimeProductNotification` (ONE_TIME_PRODUCT_PURCHASED, 1) says nothing about testing.
    static func testProductRecords() throws -> [ParsedRecord] {
        let at = ms("2024-05-02T08:15:00Z")
        let rtdn = """
        {"version":"1.0","packageName":"\(package)","eventTimeMillis":"\(at)",\
        "oneTimeProductNotification":{"version":"1.0","notificationType":1,"purchaseToken":"\(token)","sku":"coins_500"}}
        """
        let product = """
        {"kind":"androidpublisher#productPurchase","purchaseTimeMillis":"\(at)","purchaseState":0,"consumptionState":1,\
        "developerPayload":"","orderId":"GPA.3300-1234-5678-90123","purchaseType":0,"acknowledgementState":1,\
        "regionCode":"US","quantity":1}
        """
        return [try record(.googleRTDN, rtdn, receivedAt: at + 900),
                try record(.googleProductV1, product, receivedAt: at + 20_000, token: token, product: "coins_500", currency: "USD")]
    }

    @Test func theNotificationOfATestProductStatesNothingOfItsOwn() throws {
        let records = try Self.testProductRecords()
        let notification = translator.translate(records[0])
        // The RTDN alone is an ordinary purchase notification: used, as it must be when it arrives first.
        #expect(usedFacts(notification).map(\.kind) == [GoogleFactKind.oneTimeEvent])
        let resource = translator.translate(records[1])
        guard case .excluded(.test, let markers) = resource else {
            Issue.record("not excluded as a test: \(resource)")
            return
        }
        #expect(markers == [Fact(platform: .google, subject: Self.token, kind: .testPurchase, at: ms("2024-05-02T08:15:00Z"),
                                 observedAt: ms("2024-05-02T08:15:20Z"))])
        // Together (any order: the builder reads a set), nothing of the token reaches the reports.
        let facts = usedFacts(notification) + markers
        for ordered in [facts, facts.reversed()] {
            #expect(builder.history(id: Self.token, facts: ordered) == SubscriptionHistory(platform: .google, id: Self.token))
        }
        // Without the marker the same notification is a (priced by the list) purchase.
        #expect(builder.history(id: Self.token, facts: usedFacts(notification)).purchases.map(\.productId) == ["coins_500"])
    }

    @Test func aTestSubscriptionsNotificationsAreLeftOutWithIt() throws {
        let start = ms("2024-03-01T10:00:00Z")
        var archive = Archive()
        try archive.rtdn(Self.token, "premium_monthly", 4, at: start)
        try archive.rtdn(Self.token, "premium_monthly", 2, at: start + 30 * day)
        // License testers' renewals come every few minutes; v1 says purchaseType 0, v2 testPurchase {}.
        let v1 = v1JSON(start: start, expiry: start + 30 * day, orderId: "GPA.3311-2222-3333-44444", paymentState: 1,
                        autoRenewing: true, purchaseType: 0)
        let v1Test = translator.translate(try record(.googleSubscriptionV1, v1, receivedAt: start + 5_000, token: Self.token,
                                                     product: "premium_monthly"))
        guard case .excluded(.test, let markers) = v1Test else {
            Issue.record("not excluded: \(v1Test)")
            return
        }
        #expect(markers.map(\.kind) == [.testPurchase] && markers.map(\.subject) == [Self.token])
        let facts = archive.facts + markers
        #expect(builder.history(id: Self.token, facts: facts).periods.isEmpty)
        #expect(builder.history(id: Self.token, facts: facts).purchases.isEmpty)
    }

    /// docs/DESIGN.md: test status belongs to the token, so in a chain only the marked token goes; the paid token
    /// that continues it starts its own history.
    @Test func onlyTheMarkedTokenOfAChainIsLeftOut() throws {
        let start = ms("2024-03-01T10:00:00Z"), change = ms("2024-03-10T10:00:00Z")
        var archive = Archive()
        try archive.v1("paid", "premium_yearly", at: change, v1JSON(start: change, expiry: change + 366 * day,
                                                                  orderId: "GPA.3322-1", paymentState: 1, autoRenewing: true,
                                                                  linked: "tester"))
        try archive.rtdn("tester", "premium_monthly", 4, at: start)
        let marker = Fact(platform: .google, subject: "tester", kind: .testPurchase, at: start, observedAt: start + 5_000)
        let history = builder.history(id: "tester", facts: archive.facts + [marker])
        #expect(history.periods.map(\.id) == ["GPA.3322-1"])
        #expect(history.periods.first?.start == change)
    }
}

struct BareSnapshotTests {
    /// A backfill export of `purchases.subscriptions.get` (no received_at): renewal `..4` is the sixth order of a
    /// monthly plan that started 2023-01-15. It proves the order that began 2023-06-15; charging it at the
    /// subscription's start would book June's renewal in January 2023.
    @Test func aBareV1RenewalIsDatedByThePeriodItShows() throws {
        let start = ms("2023-01-15T10:00:00Z"), expiry = ms("2023-07-15T10:00:00Z")
        let order = "GPA.3372-8841-2214-50781..4"
        let json = v1JSON(start: start, expiry: expiry, orderId: order, paymentState: 1, autoRenewing: true)
        let facts = usedFacts(translator.translate(try record(.googleSubscriptionV1, json, token: "tok", product: "premium_monthly")))
        let state = try #require(facts.first { $0.kind == GoogleFactKind.state })
        #expect(state.observedAt == ms("2023-06-15T10:00:00Z"))
        #expect(state.detail == "v1;SUBSCRIPTION_STATE_ACTIVE;pay=1;cancel=")
        #expect(facts.first { $0.kind == GoogleFactKind.start }?.at == start)
        let history = builder.history(id: "tok", facts: facts)
        #expect(history.periods == [Period(id: order, productId: "premium_monthly", start: ms("2023-06-15T10:00:00Z"), end: expiry,
                                           priceMicros: 4_990_000, currency: "USD")])
    }

    @Test func aBareV2RenewalIsDatedByThePeriodItShows() throws {
        let json = v2JSON(state: "SUBSCRIPTION_STATE_ACTIVE", start: "2023-01-15T10:00:00Z", expiry: "2023-07-15T10:00:00Z",
                          latestOrderId: "GPA.3372-8841-2214-50781..4")
        let facts = usedFacts(translator.translate(try record(.googleSubscriptionV2, json, token: "tok")))
        #expect(facts.first { $0.kind == GoogleFactKind.state }?.observedAt == ms("2023-06-15T10:00:00Z"))
        #expect(builder.history(id: "tok", facts: facts).periods.map(\.start) == [ms("2023-06-15T10:00:00Z")])
    }

    /// A v2 resource whose state says the expiry has passed proves the fetch came after it.
    @Test func aBareExpiredV2IsObservedAtItsExpiry() throws {
        let json = v2JSON(state: "SUBSCRIPTION_STATE_EXPIRED", start: "2023-01-15T10:00:00Z", expiry: "2023-07-15T10:00:00Z",
                          latestOrderId: "GPA.3372-8841-2214-50781..4", autoRenew: false)
        let facts = usedFacts(translator.translate(try record(.googleSubscriptionV2, json, token: "tok")))
        #expect(facts.first { $0.kind == GoogleFactKind.state }?.observedAt == ms("2023-07-15T10:00:00Z"))
    }

    /// A stated cancellation is proof too; the expiry, ahead of the fetch, never is.
    @Test func aBareCancelledV1IsObservedAtItsCancellation() throws {
        let start = ms("2024-01-05T09:00:00Z"), expiry = ms("2024-04-05T09:00:00Z"), cancelled = ms("2024-03-20T18:30:00Z")
        let json = v1JSON(start: start, expiry: expiry, orderId: "GPA.1..1", paymentState: 1, autoRenewing: false,
                          cancelReason: 0, userCancellation: cancelled)
        let state = usedFacts(translator.translate(try record(.googleSubscriptionV1, json, token: "t", product: "p")))
            .first { $0.kind == GoogleFactKind.state }
        #expect(state?.observedAt == cancelled)
        #expect(state?.detail == "v1;SUBSCRIPTION_STATE_CANCELED;pay=1;cancel=0")
    }

    /// With a fetch time the resource is observed then, as before.
    @Test func aLoggedResourceKeepsItsFetchTime() throws {
        let json = v1JSON(start: ms("2023-01-15T10:00:00Z"), expiry: ms("2023-07-15T10:00:00Z"), orderId: "GPA.1..4",
                          paymentState: 1, autoRenewing: true)
        let fetched = ms("2023-06-20T00:00:00Z")
        let facts = usedFacts(translator.translate(try record(.googleSubscriptionV1, json, receivedAt: fetched, token: "t", product: "p")))
        #expect(facts.first { $0.kind == GoogleFactKind.state }?.observedAt == fetched)
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var start: String
        var expiry: String
        var order: Int64
        var shownStart: String
        var testDescription: String { name }
    }

    static let cases = [
        Case(name: "monthly, back to back", start: "2023-01-15T10:00:00Z", expiry: "2023-07-15T10:00:00Z", order: 5,
             shownStart: "2023-06-15T10:00:00Z"),
        Case(name: "monthly from the 31st (Google renews on the last day of shorter months)", start: "2024-01-31T12:00:00Z",
             expiry: "2024-04-30T12:00:00Z", order: 2, shownStart: "2024-03-30T12:00:00Z"),
        Case(name: "yearly after a 7-day free trial", start: "2023-01-01T00:00:00Z", expiry: "2024-01-08T00:00:00Z", order: 1,
             shownStart: "2023-01-08T00:00:00Z"),
        Case(name: "monthly after a 3-day trial", start: "2024-02-01T00:00:00Z", expiry: "2024-04-04T00:00:00Z", order: 2,
             shownStart: "2024-03-04T00:00:00Z"),
        Case(name: "monthly after a 7-day trial, 8 renewals on (also 9 × 4 weeks: the common period first)",
             start: "2024-05-18T21:49:00Z", expiry: "2025-01-25T21:49:00Z", order: 8, shownStart: "2024-12-25T21:49:00Z"),
        Case(name: "weekly", start: "2024-03-01T08:00:00Z", expiry: "2024-03-29T08:00:00Z", order: 3,
             shownStart: "2024-03-22T08:00:00Z"),
        Case(name: "quarterly", start: "2023-01-10T00:00:00Z", expiry: "2024-01-10T00:00:00Z", order: 3,
             shownStart: "2023-10-10T00:00:00Z"),
        Case(name: "monthly with a month paused in between (nearest average)", start: "2024-01-10T00:00:00Z",
             expiry: "2024-05-10T00:00:00Z", order: 2, shownStart: "2024-04-10T00:00:00Z"),
        Case(name: "the first order starts at the start", start: "2024-01-10T00:00:00Z", expiry: "2024-02-10T00:00:00Z",
             order: 0, shownStart: "2024-01-10T00:00:00Z"),
        Case(name: "never before the start", start: "2024-01-10T00:00:00Z", expiry: "2024-01-15T00:00:00Z", order: 1,
             shownStart: "2024-01-10T00:00:00Z"),
    ]

    @Test(arguments: cases)
    func theShownPeriodIsInferredFromTheResourceAlone(_ c: Case) {
        #expect(ShownPeriod.start(subscriptionStart: ms(c.start), expiry: ms(c.expiry), orderIndex: c.order) == ms(c.shownStart))
    }

    /// A monthly subscription paused for two months: the inference takes the gap for a longer period and dates
    /// the undated renewal `..1` at June 1. The builder places it after the dated fetch of `..0` (a resource shows
    /// the latest order, so `..1` was fetched after every fetch of `..0`), and every order keeps its month.
    @Test func anUndatedSnapshotIsPlacedAfterTheFetchesOfEarlierOrders() throws {
        let order = "GPA.3300-0000-0000-24345"
        let start = ms("2024-03-01T04:57:00Z"), resumed = ms("2024-06-01T04:57:00Z")
        let july = ms("2024-07-01T04:57:00Z"), august = ms("2024-08-01T04:57:00Z"), september = ms("2024-09-01T04:57:00Z")
        var archive = Archive()
        try archive.rtdn("tok", "premium_monthly", 4, at: start)
        try archive.v1("tok", "premium_monthly", at: start, v1JSON(start: start, expiry: ms("2024-04-01T04:57:00Z"), orderId: order,
                                                                 paymentState: 1, autoRenewing: true))
        try archive.rtdn("tok", "premium_monthly", 10, at: ms("2024-04-01T04:57:00Z"))
        try archive.v1("tok", "premium_monthly", at: ms("2024-04-01T04:57:00Z"),
                       v1JSON(start: start, expiry: ms("2024-04-01T04:57:00Z"), orderId: order, paymentState: nil,
                              autoRenewing: true, autoResume: resumed))
        try archive.rtdn("tok", "premium_monthly", 1, at: resumed)
        try archive.v1("tok", "premium_monthly", at: resumed, v1JSON(start: start, expiry: july, orderId: order + "..0",
                                                                   paymentState: 1, autoRenewing: true))
        try archive.rtdn("tok", "premium_monthly", 2, at: july)
        let bare = v1JSON(start: start, expiry: august, orderId: order + "..1", paymentState: 1, autoRenewing: true)
        archive.add(try record(.googleSubscriptionV1, bare, token: "tok", product: "premium_monthly"))
        try archive.rtdn("tok", "premium_monthly", 2, at: august)
        try archive.v1("tok", "premium_monthly", at: august, v1JSON(start: start, expiry: september, orderId: order + "..2",
                                                                  paymentState: 1, autoRenewing: true))
        #expect(archive.failures.isEmpty)
        #expect(archive.facts.contains { $0.kind == GoogleFactKind.state && $0.flags.contains(.inferred) && $0.observedAt == resumed })
        let periods = builder.history(id: "tok", facts: archive.facts).periods
        #expect(periods.map(\.id) == [order, order + "..0", order + "..1", order + "..2"])
        #expect(periods.map(\.start) == [start, resumed, july, august])
        #expect(periods.first?.endReason == .paused)
    }

    /// An undated snapshot's time is a guess: it never says auto-renewal was on after a stated cancellation.
    @Test func anUndatedSnapshotIsNoStatementAboutAutoRenewal() throws {
        let order = "GPA.3300-0000-0000-19134..7"
        let renewed = ms("2024-12-25T21:49:00Z"), cancelled = ms("2024-12-28T14:57:00Z"), expiry = ms("2025-01-25T21:49:00Z")
        var archive = Archive()
        try archive.rtdn("tok", "premium_monthly", 2, at: renewed)
        try archive.rtdn("tok", "premium_monthly", 3, at: cancelled)
        try archive.v2("tok", "premium_monthly", at: cancelled, v2JSON(
            state: "SUBSCRIPTION_STATE_CANCELED", start: "2024-05-18T21:49:00Z", expiry: "2025-01-25T21:49:00Z",
            latestOrderId: order, autoRenew: false,
            extra: #""canceledStateContext":{"userInitiatedCancellation":{"cancelTime":"2024-12-28T14:57:00Z"}},"#))
        // The same order as a backfill logged it before the cancellation, dated (by a guess) after it.
        archive.facts.append(Fact(platform: .google, subject: "tok", kind: GoogleFactKind.state, at: cancelled + 25_000_000,
                                  observedAt: cancelled + 25_000_000, ref: order,
                                  detail: "v2;SUBSCRIPTION_STATE_ACTIVE;pay=;cancel=", productId: "premium_monthly",
                                  end: expiry, amountMicros: 4_990_000, currency: "USD", flags: [.on, .inferred]))
        try archive.rtdn("tok", "premium_monthly", 13, at: expiry)
        let history = builder.history(id: "tok", facts: archive.facts)
        #expect(history.periods.last?.endReason == .voluntary)
    }

    @Test func extremeOrderNumbersDoNotTrap() {
        let start = ms("2024-01-10T00:00:00Z"), expiry = ms("2024-02-10T00:00:00Z")
        #expect(ShownPeriod.start(subscriptionStart: start, expiry: expiry, orderIndex: .max - 1) >= start)
        #expect(ShownPeriod.start(subscriptionStart: start, expiry: expiry, orderIndex: .max) == start)
        // No order number Google issues: read as no number at all, so no sum of positions can overflow.
        #expect(GoogleOrderId.index("GPA.1..9223372036854775806") == 0)
        #expect(GoogleOrderId.index("GPA.1..\(GoogleOrderId.largestRenewal)") == GoogleOrderId.largestRenewal + 1)
    }
}

struct LenientContainerTests {
    static let fetched = ms("2024-03-15T12:00:05Z")

    /// `lineItems` sent as `{}` or `null` (PHP and some loggers write empty lists so): nothing to read, nothing
    /// wrong; the resource's other statements are used.
    @Test(arguments: ["{}", "null", "[]"])
    func emptyLineItemsAreNoLineItems(_ empty: String) throws {
        let json = #"{"kind":"androidpublisher#subscriptionPurchaseV2","startTime":"2024-03-01T12:00:00Z","subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","latestOrderId":"GPA.1","lineItems":\#(empty),"linkedPurchaseToken":"older"}"#
        let translation = translator.translate(try record(.googleSubscriptionV2, json, receivedAt: Self.fetched, token: "t",
                                                          product: "premium_monthly"))
        let facts = usedFacts(translation)
        #expect(quarantinedParts(translation).isEmpty)
        #expect(facts.contains { $0.kind == GoogleFactKind.state && $0.end == nil && $0.productId == "premium_monthly" })
        #expect(facts.contains { $0.kind == .link && $0.ref == "older" })
    }

    /// One unreadable line item (an add-on) beside the primary one (the envelope's product): the smallest unit is
    /// set aside, naming its field, and the rest is used; the order's charge is then unknown (the add-on's is part
    /// of it), so the period is unpriced. When the unreadable one is the primary item (the envelope's product, else
    /// the first), an add-on must not stand in for it: the record is quarantined.
    @Test func aBadLineItemIsQuarantinedAsAPart() throws {
        let json = """
        {"kind":"androidpublisher#subscriptionPurchaseV2","startTime":"2024-03-01T12:00:00Z",\
        "subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","latestOrderId":"GPA.1",\
        "lineItems":[{"productId":"addon_storage","expiryTime":"tomorrow"},\
        {"productId":"premium_monthly","expiryTime":"2024-04-01T12:00:00Z","autoRenewingPlan":{"autoRenewEnabled":true,\
        "recurringPrice":{"currencyCode":"USD","units":"9","nanos":990000000}}}]}
        """
        let translation = translator.translate(try record(.googleSubscriptionV2, json, receivedAt: Self.fetched, token: "t",
                                                          product: "premium_monthly"))
        let parts = quarantinedParts(translation)
        #expect(parts.map(\.path) == ["lineItems[0]"])
        #expect(parts.first?.reason == .invalidPayload)
        #expect(parts.first?.detail.contains("lineItems[0].expiryTime") == true)
        #expect(parts.first.map { String(decoding: $0.raw, as: UTF8.self) } == #"{"productId":"addon_storage","expiryTime":"tomorrow"}"#)
        let state = usedFacts(translation).first { $0.kind == GoogleFactKind.state }
        #expect(state?.productId == "premium_monthly" && state?.end == ms("2024-04-01T12:00:00Z") && state?.amountMicros == nil)

        for envelopeProduct in ["addon_storage", nil] {
            guard case .quarantined(.invalidPayload, let detail) = translator.translate(try record(
                .googleSubscriptionV2, json, receivedAt: Self.fetched, token: "t", product: envelopeProduct)) else {
                Issue.record("the primary item \(envelopeProduct ?? "(the first)") unreadable, yet the record was used")
                continue
            }
            #expect(detail.hasSuffix("(the subscription's primary line item)"), "\(detail)")
        }
        // A test purchase is still marked as one, whatever its line items say.
        let test = json.replacingOccurrences(of: #""latestOrderId":"GPA.1","#, with: #""latestOrderId":"GPA.1","testPurchase":{},"#)
        guard case .excluded(.test, let markers) = translator.translate(try record(.googleSubscriptionV2, test, receivedAt: Self.fetched,
                                                                                   token: "t")) else {
            Issue.record("a test purchase with an unreadable primary line item was not marked")
            return
        }
        #expect(markers.map(\.subject) == ["t"])
    }

    @Test func aMistypedContextObjectIsAPart() throws {
        let json = v2JSON(state: "SUBSCRIPTION_STATE_CANCELED", start: "2024-03-01T12:00:00Z", expiry: "2024-04-01T12:00:00Z",
                          latestOrderId: "GPA.1", autoRenew: false, extra: #""canceledStateContext":"user","#)
        let translation = translator.translate(try record(.googleSubscriptionV2, json, receivedAt: Self.fetched, token: "t"))
        #expect(quarantinedParts(translation).map(\.path) == ["canceledStateContext"])
        #expect(usedFacts(translation).first { $0.kind == GoogleFactKind.state }?.detail == "v2;SUBSCRIPTION_STATE_CANCELED;pay=1;cancel=")
        // An empty context object sent as `[]` is read as `{}`.
        let php = json.replacingOccurrences(of: #""canceledStateContext":"user""#, with: #""canceledStateContext":[]"#)
        #expect(quarantinedParts(translator.translate(try record(.googleSubscriptionV2, php, receivedAt: Self.fetched, token: "t"))).isEmpty)
    }

    /// A `purchases.voidedpurchases.list` response: one item without a token is set aside, the others used.
    @Test func aVoidedListKeepsItsReadableItems() throws {
        let json = """
        {"tokenPagination":{"nextPageToken":"next"},"voidedPurchases":[\
        {"kind":"androidpublisher#voidedPurchase","purchaseToken":"a","purchaseTimeMillis":"1709294400000","voidedTimeMillis":"1709899200000","orderId":"GPA.1","voidedSource":0,"voidedReason":1},\
        {"kind":"androidpublisher#voidedPurchase","purchaseTimeMillis":"1709294400000","voidedTimeMillis":"1709899200000"},\
        {"kind":"androidpublisher#voidedPurchase","purchaseToken":"c","purchaseTimeMillis":"1709294400000","voidedTimeMillis":"1709985600000","orderId":"GPA.3..0"}]}
        """
        let translation = translator.translate(try record(.googleVoidedPurchase, json, receivedAt: ms("2024-03-20T00:00:00Z")))
        #expect(usedFacts(translation).map(\.subject) == ["a", "c"])
        #expect(quarantinedParts(translation).map(\.path) == ["voidedPurchases[1]"])
        #expect(quarantinedParts(translation).first?.reason == .missingContext)
        // An empty list is nothing to read; a list of nothing readable is quarantined whole.
        #expect(translator.translate(try record(.googleVoidedPurchase, #"{"voidedPurchases":{}}"#)) == .used([]))
        let unreadable = #"{"voidedPurchases":[{"voidedTimeMillis":"1709899200000"},7]}"#
        #expect(reason(translator.translate(try record(.googleVoidedPurchase, unreadable))) == .missingContext)
    }
}

struct ImplausibleTimeTests {
    /// Issue 18: `startTimeMillis: "-9223372036854775808"` was accepted and later crashed every status and report.
    @Test(arguments: ["-9223372036854775808", "9223372036854775807", "0", "1199145599999", "171000000000000000"])
    func anImplausibleStartIsQuarantinedNamingTheField(_ value: String) throws {
        let json = v1JSON(start: 0, expiry: ms("2024-02-01T00:00:00Z"), orderId: "GPA.1", paymentState: 1, autoRenewing: true)
            .replacingOccurrences(of: #""startTimeMillis":"0""#, with: #""startTimeMillis":"\#(value)""#)
        guard case .quarantined(let reason, let detail) = translator.translate(try record(.googleSubscriptionV1, json,
                                                                                          token: "t", product: "p")) else {
            Issue.record("not quarantined")
            return
        }
        #expect(reason == .implausibleTimestamp)
        #expect(detail.hasPrefix("startTimeMillis is \(value) ms"))
    }

    /// Google's own RTDN example says `"eventTimeMillis":"503349783"` (1970-01-06): a placeholder, not a time. A
    /// field named for milliseconds is never reread as seconds.
    @Test func googlesExampleEventTimeIsImplausible() throws {
        let json = #"{"version":"1.0","packageName":"com.example.app","eventTimeMillis":"503349783","subscriptionNotification":{"version":"1.0","notificationType":4,"purchaseToken":"PURCHASE_TOKEN","subscriptionId":"my.sku"}}"#
        guard case .quarantined(.implausibleTimestamp, let detail) = translator.translate(try record(.googleRTDN, json)) else {
            Issue.record("not quarantined")
            return
        }
        #expect(detail.contains("eventTimeMillis") && detail.contains("1970-01-06"))
    }

    /// The window's upper edge is the run's clock plus ten years: an expiry in 2035 is fine with a 2026 clock, one
    /// in 2037 is not; the same payload passes with a later clock.
    @Test func theUpperEdgeFollowsTheRunsClock() throws {
        let json = v2JSON(state: "SUBSCRIPTION_STATE_ACTIVE", start: "2024-03-01T00:00:00Z", expiry: "2037-03-01T00:00:00Z",
                          latestOrderId: "GPA.1")
        let now = translator.translate(try record(.googleSubscriptionV2, json, receivedAt: ms("2024-03-01T00:00:09Z"), token: "t",
                                                  product: "premium_monthly"))
        guard case .quarantined(.implausibleTimestamp, let detail) = now else {
            Issue.record("an expiry in 2037 read with a 2024 clock")
            return
        }
        #expect(detail.hasPrefix("lineItems[0].expiryTime"))
        let later = PlayStoreTranslator(packageNames: [package], times: PlausibleTimes(now: ms("2030-01-01T00:00:00Z")))
        #expect(quarantinedParts(later.translate(try record(.googleSubscriptionV2, json, receivedAt: ms("2024-03-01T00:00:09Z"),
                                                            token: "t", product: "premium_monthly"))).isEmpty)
    }
}

private func reason(_ translation: Translation) -> QuarantineReason? {
    if case .quarantined(let reason, _) = translation { return reason }
    return nil
}

/// A subscription with add-ons (Play Billing Library 7+): one purchase token, one order a billing period, a line
/// item per product bought (base plan and add-ons share the billing period). metrics.md's period is the order, so
/// its price is the sum of the items' charges, under the primary item's product.
struct AddOnLineItemTests {
    static let fetched = ms("2024-03-15T12:00:05Z")

    /// A line item as `purchases.subscriptionsv2.get` shows it.
    static func item(_ product: String, plan: String, units: String, nanos: Int = 990_000_000,
                     order: String? = "GPA.3372-8841-2214-50781", expiry: String = "2024-04-01T12:00:00Z",
                     currency: String = "EUR", phase: String = #""basePrice":{}"#) -> String {
        let orderMember = order.map { #","latestSuccessfulOrderId":"\#($0)""# } ?? ""
        return """
        {"productId":"\(product)","expiryTime":"\(expiry)",\
        "autoRenewingPlan":{"autoRenewEnabled":true,"recurringPrice":{"currencyCode":"\(currency)","units":"\(units)","nanos":\(nanos)}},\
        "offerDetails":{"basePlanId":"\(plan)","offerTags":[]},"offerPhase":{\(phase)}\(orderMember)}
        """
    }

    static func resource(_ items: [String]) -> String {
        """
        {"kind":"androidpublisher#subscriptionPurchaseV2","regionCode":"DE","startTime":"2024-03-01T12:00:00.000Z",\
        "subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","acknowledgementState":"ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED",\
        "lineItems":[\(items.joined(separator: ","))]}
        """
    }

    static func state(_ items: [String], product: String? = nil) throws -> Fact? {
        let translation = translator.translate(try record(.googleSubscriptionV2, resource(items), receivedAt: fetched,
                                                          token: "addon-token", product: product))
        #expect(quarantinedParts(translation).isEmpty)
        return usedFacts(translation).first { $0.kind == GoogleFactKind.state }
    }

    /// Base 9.99 and two add-ons 2.99 and 1.49, one order: 14.47 EUR, the base plan's product and expiry.
    @Test func theOrderCostsEveryItem() throws {
        let state = try Self.state([Self.item("music_premium", plan: "monthly", units: "9"),
                                    Self.item("video_addon", plan: "monthly-addon", units: "2"),
                                    Self.item("lyrics_addon", plan: "monthly-addon", units: "1", nanos: 490_000_000)])
        #expect(state?.productId == "music_premium")
        #expect(state?.amountMicros == 14_470_000 && state?.currency == "EUR")
        #expect(state?.end == ms("2024-04-01T12:00:00Z") && state?.ref == "GPA.3372-8841-2214-50781")
        #expect(state?.flags.contains(.trial) == false)
    }

    /// The envelope's product picks the primary item; the others still add their charges.
    @Test func theEnvelopeNamesThePrimary() throws {
        let state = try Self.state([Self.item("video_addon", plan: "monthly-addon", units: "2"),
                                    Self.item("music_premium", plan: "monthly", units: "9")], product: "music_premium")
        #expect(state?.productId == "music_premium" && state?.amountMicros == 12_980_000)
    }

    /// An add-on's introductory phase states no price: the order's charge is unknown, so it is unpriced and an
    /// offer (the report prices it from a list and says so), never the base price alone.
    @Test func anAddOnWithoutItsChargeLeavesTheOrderUnpriced() throws {
        let state = try Self.state([Self.item("music_premium", plan: "monthly", units: "9"),
                                    Self.item("video_addon", plan: "monthly-addon", units: "2",
                                              phase: #""introductoryPrice":{}"#)])
        #expect(state?.amountMicros == nil && state?.flags.contains(.introductory) == true)
        // Another currency than the order's cannot be added either.
        let mixed = try Self.state([Self.item("music_premium", plan: "monthly", units: "9"),
                                    Self.item("video_addon", plan: "monthly-addon", units: "2", currency: "USD")])
        #expect(mixed?.amountMicros == nil)
        // An add-on in a proration phase (added mid-period, aligned with the base plan) makes the order's charge
        // depend on the replacement mode: prorated, at the items' recurring prices.
        let aligned = try Self.state([Self.item("music_premium", plan: "monthly", units: "9"),
                                      Self.item("video_addon", plan: "monthly-addon", units: "2",
                                                phase: #""prorationPeriod":{"originalOfferPhaseType":"BASE"}"#)])
        #expect(aligned?.flags.contains(.prorated) == true && aligned?.amountMicros == 12_980_000)
    }

    /// Free trials: the order is a trial only when every item is; an add-on charged during the base plan's trial
    /// makes it a paid order of the add-on's price.
    @Test func trialsOfTheItems() throws {
        let both = try Self.state([Self.item("music_premium", plan: "monthly", units: "9", phase: #""freeTrial":{}"#),
                                   Self.item("video_addon", plan: "monthly-addon", units: "2", phase: #""freeTrial":{}"#)])
        #expect(both?.flags.contains(.trial) == true && both?.amountMicros == 0)
        let charged = try Self.state([Self.item("music_premium", plan: "monthly", units: "9", phase: #""freeTrial":{}"#),
                                      Self.item("video_addon", plan: "monthly-addon", units: "2")])
        #expect(charged?.flags.contains(.trial) == false && charged?.amountMicros == 2_990_000)
        let trialAddOn = try Self.state([Self.item("music_premium", plan: "monthly", units: "9"),
                                         Self.item("video_addon", plan: "monthly-addon", units: "2", phase: #""freeTrial":{}"#)])
        #expect(trialAddOn?.flags.contains(.trial) == false && trialAddOn?.amountMicros == 9_990_000)
    }

    /// An item of another order (another `latestSuccessfulOrderId`, or without one an expiry more than a day
    /// away) is not part of the order shown: its charge is not added.
    @Test func itemsOfOtherOrdersStayOut() throws {
        let other = try Self.state([Self.item("music_premium", plan: "monthly", units: "9"),
                                    Self.item("video_addon", plan: "monthly-addon", units: "2", order: "GPA.3372-8841-2214-50781..0")])
        #expect(other?.amountMicros == 9_990_000)
        let undated = try Self.state([Self.item("music_premium", plan: "monthly", units: "9", order: nil),
                                      Self.item("video_addon", plan: "monthly-addon", units: "2", order: nil,
                                                expiry: "2024-03-20T12:00:00Z"),
                                      Self.item("lyrics_addon", plan: "monthly-addon", units: "1", order: nil,
                                                expiry: "2024-04-01T12:00:01Z")])
        #expect(undated?.amountMicros == 11_980_000)
        // The primary states its order: an item stating none is not owned in it.
        let unowned = try Self.state([Self.item("music_premium", plan: "monthly", units: "9"),
                                      Self.item("video_addon", plan: "monthly-addon", units: "2", order: nil)])
        #expect(unowned?.amountMicros == 9_990_000)
    }

    /// A deferred change (`deferredItemReplacement`): the product that will take an item's place at the next
    /// renewal may be listed already, without an order (Google: `latestSuccessfulOrderId` is "not present if the
    /// item is not owned by the user yet (e.g. the item being deferred replaced to)"). It is no add-on, even when
    /// no item states an order.
    @Test func aDeferredReplacementIsNoAddOn() throws {
        let deferred = #""deferredItemReplacement":{"productId":"music_basic"}"#
        for order in ["GPA.3372-8841-2214-50781", nil] {
            let primary = Self.item("music_premium", plan: "monthly", units: "9", order: order)
                .replacingOccurrences(of: #""productId":"music_premium","#, with: #""productId":"music_premium",\#(deferred),"#)
            let state = try Self.state([primary, Self.item("music_basic", plan: "monthly", units: "4", order: nil)])
            #expect(state?.productId == "music_premium" && state?.amountMicros == 9_990_000, "order \(order ?? "none")")
        }
    }
}

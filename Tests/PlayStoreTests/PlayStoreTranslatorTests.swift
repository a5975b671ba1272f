import Facts
import Foundation
import Ingest
@testable import PlayStore
import Testing

private let translator = PlayStoreTranslator(packageNames: [package], times: testTimes)

struct NotificationTests {
    static let types = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 17, 18, 19, 20, 22]

    @Test(arguments: types, [false, true])
    func subscriptionNotificationBecomesAnEvent(type: Int, numericTime: Bool) throws {
        let at = ms("2024-03-15T12:00:00Z")
        let json = rtdnJSON(token: "tok-1", product: "premium_monthly", type: type, at: at, numeric: numericTime)
        let facts = usedFacts(translator.translate(try record(.googleRTDN, json, receivedAt: at + 900)))
        #expect(facts == [Fact(platform: .google, subject: "tok-1", kind: GoogleFactKind.event, at: at, observedAt: at,
                               detail: String(type), productId: "premium_monthly")])
    }

    @Test func unknownNotificationTypeIsKeptVerbatim() throws {
        let json = rtdnJSON(token: "tok-1", product: "premium_monthly", type: 42, at: 1_710_504_000_000)
        let facts = usedFacts(translator.translate(try record(.googleRTDN, json)))
        #expect(facts.count == 1)
        #expect(facts.first?.detail == "42")
        #expect(facts.first?.kind == GoogleFactKind.event)
    }

    @Test func pubSubPushIsDecoded() throws {
        let inner = rtdnJSON(token: "tok-9", product: "premium_weekly", type: 2, at: 1_710_504_000_000)
        let data = Base64URL.encode(Array(inner.utf8))
        let push = """
        {"message":{"data":"\(data)","messageId":"136969346945","publishTime":"2024-03-15T12:00:00.123Z"},\
        "subscription":"projects/myproject/subscriptions/mysubscription"}
        """
        let facts = usedFacts(translator.translate(try record(.googleRTDN, push)))
        #expect(facts.map(\.subject) == ["tok-9"])
        #expect(facts.first?.detail == "2")
        #expect(facts.first?.at == 1_710_504_000_000)
        // A bare Pub/Sub message under `source: google.rtdn` (as a background Cloud Function receives it).
        let bare = #"{"data":"\#(data)","messageId":"136969346945","publishTime":"2024-03-15T12:00:00.123Z"}"#
        #expect(usedFacts(translator.translate(try record(.googleRTDN, bare))) == facts)
    }

    /// A Pub/Sub pull response, as a worker that pulls logs it: each message's notification is used, a test
    /// notification states nothing and a message that cannot be decoded is quarantined as a part.
    @Test func pullResponseGivesEachMessage() throws {
        func received(_ rtdn: String, id: String) -> String {
            """
            {"ackId":"ack-\(id)","message":{"data":"\(Base64URL.encode(Array(rtdn.utf8)))","messageId":"\(id)",\
            "publishTime":"2024-03-15T12:00:00.123Z"},"deliveryAttempt":1}
            """
        }
        let renewed = rtdnJSON(token: "tok-a", product: "premium_monthly", type: 2, at: 1_710_504_000_000)
        let cancelled = rtdnJSON(token: "tok-b", product: "premium_monthly", type: 3, at: 1_710_504_060_000)
        let test = #"{"version":"1.0","packageName":"com.example.app","eventTimeMillis":"1710504000000","testNotification":{"version":"1.0"}}"#
        let response = """
        {"receivedMessages":[\(received(renewed, id: "1")),\(received(test, id: "2")),\
        {"ackId":"ack-3","message":{"data":"%%%","messageId":"3"}},\(received(cancelled, id: "4"))]}
        """
        let translation = translator.translate(try record(.googleRTDN, response))
        #expect(usedFacts(translation).filter { $0.kind == GoogleFactKind.event }.map(\.subject) == ["tok-a", "tok-b"])
        #expect(usedFacts(translation).first { $0.subject == "tok-b" }?.at == 1_710_504_060_000)
        #expect(quarantinedParts(translation).map(\.path) == ["receivedMessages[2]"])
        #expect(quarantinedParts(translation).first?.detail == "message.data is not base64")
        // A message whose data is JSON with a string that is not UTF-8 keeps its own reason, as a lone one would.
        let latin1 = Array(#"{"version":"1.0","packageName":"caf"#.utf8) + [0xE9] + Array(#""}"#.utf8)
        let badText = #"{"receivedMessages":[{"ackId":"a","message":{"data":"\#(Base64URL.encode(latin1))","messageId":"8"}}]}"#
        guard case .quarantined(.invalidUTF8, _) = translator.translate(try record(.googleRTDN, badText)) else {
            Issue.record("a message of text that is not UTF-8 lost its reason")
            return
        }
        // The notifications are judged by their own package, not by an envelope naming another.
        let envelopeOfAnother = translator.translate(try record(.googleRTDN, response, packageName: "com.other.app"))
        #expect(usedFacts(envelopeOfAnother) == usedFacts(translation))
        // Test notifications alone: the response is excluded, as one would be.
        let tests = #"{"receivedMessages":[\#(received(test, id: "5"))]}"#
        #expect(translator.translate(try record(.googleRTDN, tests)) == .excluded(.test))
        // Another app's message is set aside; an RTDN without its event time takes the message's publish time.
        let other = rtdnJSON(token: "tok-c", product: "premium_monthly", type: 2, at: 1_710_504_000_000)
            .replacingOccurrences(of: "com.example.app", with: "com.other.app")
        let undated = #"{"version":"1.0","packageName":"com.example.app","subscriptionNotification":{"version":"1.0","notificationType":4,"purchaseToken":"tok-d","subscriptionId":"premium_monthly"}}"#
        let mixed = translator.translate(try record(.googleRTDN, #"{"receivedMessages":[\#(received(other, id: "6")),\#(received(undated, id: "7"))]}"#))
        #expect(quarantinedParts(mixed).map(\.reason) == [.wrongPackage])
        #expect(usedFacts(mixed).first { $0.subject == "tok-d" }?.at == ms("2024-03-15T12:00:00.123Z"))
        // An empty pull, as some loggers write it, states nothing.
        for empty in [#"{"receivedMessages":{}}"#, #"{"receivedMessages":null}"#, #"{"receivedMessages":[]}"#] {
            #expect(translator.translate(try record(.googleRTDN, empty)) == .used([]))
        }
    }

    @Test func testNotificationIsExcluded() throws {
        let json = #"{"version":"1.0","packageName":"com.example.app","eventTimeMillis":"1710504000000","testNotification":{"version":"1.0"}}"#
        #expect(translator.translate(try record(.googleRTDN, json)) == .excluded(.test))
    }

    /// A negative price is no charge Google makes: a v1 resource stating one is quarantined, naming the field, and
    /// so is a v2 resource whose only (primary) line item states a negative recurring price.
    @Test func aNegativePriceIsQuarantined() throws {
        let start = ms("2024-01-01T00:00:00Z"), expiry = ms("2024-02-01T00:00:00Z")
        let v1 = v1JSON(start: start, expiry: expiry, orderId: "GPA.1", paymentState: 1, autoRenewing: true, priceMicros: "-4990000")
        guard case .quarantined(_, let detail) = translator.translate(try record(.googleSubscriptionV1, v1, receivedAt: start + 5_000,
                                                                                 token: "tok-n", product: "premium_monthly")) else {
            Issue.record("a negative v1 price was used")
            return
        }
        #expect(detail.contains("priceAmountMicros is negative: -4990000"), "\(detail)")
        // Nor is a price larger than any store charges (here Int64.max micros), which summed would saturate revenue.
        let absurd = v1JSON(start: start, expiry: expiry, orderId: "GPA.1", paymentState: 1, autoRenewing: true,
                            priceMicros: "9223372036854775807")
        guard case .quarantined(_, let absurdDetail) = translator.translate(try record(.googleSubscriptionV1, absurd, receivedAt: start + 5_000,
                                                                                       token: "tok-n", product: "premium_monthly")) else {
            Issue.record("an absurd v1 price was used")
            return
        }
        #expect(absurdDetail.contains("more than any store charges"), "\(absurdDetail)")
        let v2 = v2JSON(state: "SUBSCRIPTION_STATE_ACTIVE", start: "2024-01-01T00:00:00Z", expiry: "2024-02-01T00:00:00Z",
                        latestOrderId: "GPA.2", units: "-4")
        let translated = translator.translate(try record(.googleSubscriptionV2, v2, receivedAt: start + 5_000, token: "tok-n2",
                                                         product: "premium_monthly"))
        guard case .quarantined(.invalidPayload, let v2Detail) = translated else {
            Issue.record("a negative v2 price was used: \(translated)")
            return
        }
        #expect(v2Detail.contains("recurringPrice is out of range: units -4"), "\(v2Detail)")
        // A negative introductory price makes `introductoryPriceInfo` a quarantined part; the resource is used.
        let intro = v1JSON(start: start, expiry: expiry, orderId: "GPA.3", paymentState: 1, autoRenewing: true)
            .replacingOccurrences(of: "{", with: #"{"introductoryPriceInfo":{"introductoryPriceCurrencyCode":"USD","#
                                    + #""introductoryPriceAmountMicros":"-990000","introductoryPricePeriod":"P1M","#
                                    + #""introductoryPriceCycles":1},"#, options: .anchored)
        let withIntro = translator.translate(try record(.googleSubscriptionV1, intro, receivedAt: start + 5_000, token: "tok-n3",
                                                        product: "premium_monthly"))
        guard case .used(_, let introParts) = withIntro else {
            Issue.record("the v1 resource was not used: \(withIntro)")
            return
        }
        #expect(introParts.contains { $0.detail.contains("introductoryPriceAmountMicros is negative: -990000") }, "\(introParts)")
    }

    /// A refund request under review (`pendingRefundReviewNotification`, in Google's RTDN reference since 2025)
    /// refunds nothing yet: used, stating nothing, and recognised by shape without a `source`.
    @Test func aPendingRefundReviewStatesNothing() throws {
        let json = #"{"version":"1.0","packageName":"com.example.app","eventTimeMillis":"1710504000000","pendingRefundReviewNotification":{"purchaseToken":"tok-r"}}"#
        #expect(translator.translate(try record(.googleRTDN, json)) == .used([]))
        #expect(try PlayStorePayloads().recognize(JSONParser.parse(Array(json.utf8)))?.source == .googleRTDN)
    }

    @Test func otherPackageIsQuarantined() throws {
        let json = rtdnJSON(token: "t", product: "p", type: 2, at: 1_710_504_000_000).replacingOccurrences(of: package, with: "com.other.app")
        guard case .quarantined(let reason, let detail) = translator.translate(try record(.googleRTDN, json)) else {
            Issue.record("not quarantined")
            return
        }
        #expect(reason == .wrongPackage)
        #expect(detail.contains("com.other.app"))
        // Any package is accepted when none is configured.
        #expect(usedFacts(PlayStoreTranslator(packageNames: [], times: testTimes).translate(try record(.googleRTDN, json))).count == 1)
    }

    @Test func oneTimeAndVoidedNotifications() throws {
        let oneTime = """
        {"version":"1.0","packageName":"com.example.app","eventTimeMillis":"1710504000000",\
        "oneTimeProductNotification":{"version":"1.0","notificationType":1,"purchaseToken":"ptok","sku":"coins_100"}}
        """
        let facts = usedFacts(translator.translate(try record(.googleRTDN, oneTime)))
        #expect(facts == [Fact(platform: .google, subject: "ptok", kind: GoogleFactKind.oneTimeEvent, at: 1_710_504_000_000,
                               observedAt: 1_710_504_000_000, detail: "1", productId: "coins_100")])
        let voided = """
        {"version":"1.0","packageName":"com.example.app","eventTimeMillis":1710504000000,\
        "voidedPurchaseNotification":{"purchaseToken":"tok-1","orderId":"GPA.3342-1111-2222-33333..2","productType":1,"refundType":1}}
        """
        let voidFacts = usedFacts(translator.translate(try record(.googleRTDN, voided)))
        #expect(voidFacts == [Fact(platform: .google, subject: "tok-1", kind: GoogleFactKind.voided, at: 1_710_504_000_000,
                                   observedAt: 1_710_504_000_000, ref: "GPA.3342-1111-2222-33333..2", detail: "1")])
    }

    @Test func wrongTypeIsInvalidPayload() throws {
        let json = #"{"version":"1.0","packageName":"com.example.app","eventTimeMillis":{},"subscriptionNotification":{"notificationType":2,"purchaseToken":"t"}}"#
        guard case .quarantined(let reason, let detail) = translator.translate(try record(.googleRTDN, json)) else {
            Issue.record("not quarantined")
            return
        }
        #expect(reason == .invalidPayload)
        #expect(detail.contains("eventTimeMillis"))
        let noToken = #"{"packageName":"com.example.app","eventTimeMillis":"1710504000000","subscriptionNotification":{"notificationType":2}}"#
        guard case .quarantined(.invalidPayload, let missing) = translator.translate(try record(.googleRTDN, noToken)) else {
            Issue.record("not quarantined")
            return
        }
        #expect(missing.contains("purchaseToken"))
    }
}

struct SubscriptionResourceTests {
    @Test func v1WithEveryFieldAsStrings() throws {
        let start = ms("2024-01-01T08:00:00Z"), expiry = ms("2024-02-01T08:00:00Z")
        let cancelledAt = ms("2024-01-20T10:00:00Z"), fetched = ms("2024-01-20T10:00:05Z")
        let json = """
        {"kind":"androidpublisher#subscriptionPurchase","startTimeMillis":"\(start)","expiryTimeMillis":"\(expiry)",\
        "autoResumeTimeMillis":null,"autoRenewing":"false","priceCurrencyCode":"EUR","priceAmountMicros":"5990000",\
        "introductoryPriceInfo":{"introductoryPriceCurrencyCode":"EUR","introductoryPriceAmountMicros":"990000",\
        "introductoryPricePeriod":"P1M","introductoryPriceCycles":"1"},"countryCode":"DE","developerPayload":"",\
        "paymentState":"1","cancelReason":"0","userCancellationTimeMillis":"\(cancelledAt)",\
        "cancelSurveyResult":{"cancelSurveyReason":"1"},"orderId":"GPA.3345-6789-0123-45678","linkedPurchaseToken":"old-token",\
        "purchaseType":"1","profileName":"A","emailAddress":"a@example.com","obfuscatedExternalAccountId":"acct-7",\
        "acknowledgementState":"1"}
        """
        let facts = usedFacts(translator.translate(try record(.googleSubscriptionV1, json, receivedAt: fetched,
                                                                token: "tok-v1", product: "premium_monthly", appUser: "u-1")))
        let state = try #require(facts.first { $0.kind == GoogleFactKind.state })
        #expect(state.subject == "tok-v1")
        #expect(state.at == fetched)
        #expect(state.observedAt == fetched)
        #expect(state.ref == "GPA.3345-6789-0123-45678")
        #expect(state.end == expiry)
        #expect(state.productId == "premium_monthly")
        // Order 0 is inside the one introductory cycle: the introductory price was charged.
        #expect(state.amountMicros == 990_000)
        #expect(state.currency == "EUR")
        #expect(state.flags == [.introductory, .offer])
        #expect(state.detail == "v1;SUBSCRIPTION_STATE_CANCELED;pay=1;cancel=0;intro=990000x1")
        #expect(facts.contains(Fact(platform: .google, subject: "tok-v1", kind: GoogleFactKind.start, at: start,
                                    observedAt: fetched, productId: "premium_monthly")))
        #expect(facts.contains(Fact(platform: .google, subject: "tok-v1", kind: .link, at: start, observedAt: fetched, ref: "old-token")))
        #expect(facts.contains(Fact(platform: .google, subject: "tok-v1", kind: GoogleFactKind.cancel, at: cancelledAt,
                                    observedAt: fetched, detail: "0")))
        #expect(Set(facts.filter { $0.kind == .user }.compactMap(\.ref)) == ["acct-7", "u-1"])
        #expect(!facts.contains { $0.kind == GoogleFactKind.pause })
    }

    @Test func v1StatesAreDerivedFromPaymentAndExpiry() throws {
        let expiry = ms("2024-03-07T23:00:00Z")
        func state(_ json: String, fetched: Millis) throws -> String? {
            usedFacts(translator.translate(try record(.googleSubscriptionV1, json, receivedAt: fetched, token: "t", product: "p")))
                .first { $0.kind == GoogleFactKind.state }?.detail
        }
        let pending = v1JSON(start: ms("2024-01-07T23:00:00Z"), expiry: expiry, orderId: "GPA.1..0", paymentState: 0, autoRenewing: true)
        #expect(try state(pending, fetched: expiry - 86_400_000) == "v1;SUBSCRIPTION_STATE_IN_GRACE_PERIOD;pay=0;cancel=")
        #expect(try state(pending, fetched: expiry + 86_400_000) == "v1;SUBSCRIPTION_STATE_ON_HOLD;pay=0;cancel=")
        let lost = v1JSON(start: ms("2024-01-07T23:00:00Z"), expiry: expiry, orderId: "GPA.1..0", paymentState: 0, autoRenewing: false, cancelReason: 1)
        #expect(try state(lost, fetched: expiry + 86_400_000) == "v1;SUBSCRIPTION_STATE_EXPIRED;pay=0;cancel=1")
        let paused = v1JSON(start: ms("2024-01-07T23:00:00Z"), expiry: expiry, orderId: "GPA.1", paymentState: 1, autoRenewing: true, autoResume: expiry + 1)
        #expect(try state(paused, fetched: expiry + 5_000) == "v1;SUBSCRIPTION_STATE_PAUSED;pay=1;cancel=")
        #expect(try state(paused, fetched: expiry - 5_000) == "v1;SUBSCRIPTION_STATE_ACTIVE;pay=1;cancel=")
        let trial = v1JSON(start: ms("2024-01-07T23:00:00Z"), expiry: expiry, orderId: "GPA.1", paymentState: 2, autoRenewing: true)
        let trialFact = usedFacts(translator.translate(try record(.googleSubscriptionV1, trial, receivedAt: ms("2024-03-01T00:00:00Z"), token: "t", product: "p")))
            .first { $0.kind == GoogleFactKind.state }
        #expect(trialFact?.flags == [.trial, .on])
        #expect(trialFact?.amountMicros == 0)
    }

    static let states = ["SUBSCRIPTION_STATE_UNSPECIFIED", "SUBSCRIPTION_STATE_PENDING", "SUBSCRIPTION_STATE_ACTIVE",
                         "SUBSCRIPTION_STATE_PAUSED", "SUBSCRIPTION_STATE_IN_GRACE_PERIOD", "SUBSCRIPTION_STATE_ON_HOLD",
                         "SUBSCRIPTION_STATE_CANCELED", "SUBSCRIPTION_STATE_EXPIRED",
                         "SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED", "SUBSCRIPTION_STATE_SOMETHING_NEW"]

    @Test(arguments: states)
    func v2StateIsKeptAndNormalised(state: String) throws {
        let json = v2JSON(state: state, start: "2024-01-31T23:00:00.123Z", expiry: "2024-04-15T12:00:00.500123Z",
                          latestOrderId: "GPA.3345-6789-0123-45678..0", units: "1234", nanos: 560_000_000, currency: "JPY")
        let fetched = ms("2024-03-15T12:00:05Z")
        let facts = usedFacts(translator.translate(try record(.googleSubscriptionV2, json, receivedAt: fetched, token: "tok-v2")))
        let fact = try #require(facts.first { $0.kind == GoogleFactKind.state })
        #expect(fact.detail == "v2;\(state);pay=1;cancel=")  // a base-price offer phase
        #expect(fact.end == ms("2024-04-15T12:00:00.500Z"))
        #expect(fact.amountMicros == 1_234_560_000)
        #expect(fact.currency == "JPY")
        #expect(fact.productId == "premium_monthly")
        #expect(fact.ref == "GPA.3345-6789-0123-45678..0")
        #expect(fact.flags == [.on])
        #expect(facts.contains { $0.kind == GoogleFactKind.start && $0.at == ms("2024-01-31T23:00:00.123Z") })
    }

    @Test func v2CancellationPauseTrialAndAccount() throws {
        let extra = """
        "canceledStateContext":{"userInitiatedCancellation":{"cancelSurveyResult":{"reason":"CANCEL_SURVEY_REASON_NOT_ENOUGH_USAGE"},\
        "cancelTime":"2024-01-05T10:00:00Z"}},"pausedStateContext":{"autoResumeTime":"2024-03-01T00:00:00Z"},\
        "linkedPurchaseToken":"older","externalAccountIdentifiers":{"obfuscatedExternalAccountId":"acct-1"},
        """
        let json = v2JSON(state: "SUBSCRIPTION_STATE_CANCELED", start: "2024-01-01T00:00:00Z", expiry: "2024-01-08T00:00:00Z",
                          latestOrderId: "GPA.1", autoRenew: false, offerPhase: "\"freeTrial\":{}", extra: extra)
        let facts = usedFacts(translator.translate(try record(.googleSubscriptionV2, json, receivedAt: ms("2024-01-05T10:00:05Z"), token: "tok")))
        let state = try #require(facts.first { $0.kind == GoogleFactKind.state })
        #expect(state.detail == "v2;SUBSCRIPTION_STATE_CANCELED;pay=2;cancel=0")  // a free-trial offer phase
        #expect(state.flags == [.trial])
        #expect(state.amountMicros == 0)
        #expect(facts.contains { $0.kind == GoogleFactKind.cancel && $0.at == ms("2024-01-05T10:00:00Z") && $0.detail == "0" })
        #expect(facts.contains { $0.kind == GoogleFactKind.pause && $0.end == ms("2024-03-01T00:00:00Z") })
        #expect(facts.contains { $0.kind == .link && $0.ref == "older" && $0.at == ms("2024-01-01T00:00:00Z") })
        #expect(facts.contains { $0.kind == .user && $0.ref == "acct-1" })
    }

    @Test func missingContextIsQuarantined() throws {
        let v1 = v1JSON(start: 1_704_067_200_000, expiry: 1_706_745_600_000, orderId: "GPA.1", paymentState: 1, autoRenewing: true)
        #expect(reason(translator.translate(try record(.googleSubscriptionV1, v1, product: "p"))) == .missingContext)
        #expect(reason(translator.translate(try record(.googleSubscriptionV1, v1, token: "t"))) == .missingContext)
        let v2 = v2JSON(state: "SUBSCRIPTION_STATE_ACTIVE", start: "2024-01-01T00:00:00Z", expiry: "2024-02-01T00:00:00Z", latestOrderId: "GPA.1")
        #expect(reason(translator.translate(try record(.googleSubscriptionV2, v2, product: "p"))) == .missingContext)
        let product = #"{"kind":"androidpublisher#productPurchase","purchaseTimeMillis":"1","purchaseState":0}"#
        #expect(reason(translator.translate(try record(.googleProductV1, product, token: "t"))) == .missingContext)
    }

    /// A v2 resource with its token but no product anywhere (`lineItems` null, or its only line item unreadable,
    /// and no `subscription_id`) is quarantined naming what is missing, not the token it has.
    @Test func aV2ResourceWithoutAProductSaysSo() throws {
        func detail(_ body: String) throws -> String? {
            guard case .quarantined(_, let detail) = translator.translate(try record(.googleSubscriptionV2, body, token: "tok-x")) else { return nil }
            return detail
        }
        let noItems = #"{"subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","startTime":"2024-01-01T00:00:00Z","lineItems":null}"#
        #expect(try detail(noItems) == "a v2 subscription resource needs a product: lineItems[].productId, or subscription_id in its envelope")
        let badItem = #"{"subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","startTime":"2024-01-01T00:00:00Z","lineItems":[{"productId":"p","expiryTime":"tomorrow"}]}"#
        let said = try #require(try detail(badItem))
        #expect(said.contains("lineItems[0].expiryTime") && said.hasSuffix("(the subscription's primary line item)"), "\(said)")
    }

    /// `purchaseType` 0 ("Test (i.e. purchased from a license testing account)", purchases.subscriptions and
    /// purchases.products in Google's androidpublisher reference) and v2 `testPurchase: {}`: excluded, with the
    /// marker that makes every other record of the token excluded too.
    @Test func testPurchasesAreExcluded() throws {
        let start = ms("2024-01-01T00:00:00Z"), fetched = ms("2024-01-01T00:00:09Z")
        func marker(_ at: Millis, observedAt: Millis = fetched) -> Translation {
            .excluded(.test, markers: [Fact(platform: .google, subject: "t", kind: .testPurchase, at: at, observedAt: observedAt)])
        }
        let v1 = v1JSON(start: start, expiry: 1_706_745_600_000, orderId: "GPA.1", paymentState: 1, autoRenewing: true, purchaseType: 0)
        #expect(translator.translate(try record(.googleSubscriptionV1, v1, receivedAt: fetched, token: "t", product: "p")) == marker(start))
        let promo = v1JSON(start: start, expiry: 1_706_745_600_000, orderId: "GPA.1", paymentState: 1, autoRenewing: true, purchaseType: 1)
        #expect(!usedFacts(translator.translate(try record(.googleSubscriptionV1, promo, token: "t", product: "p"))).isEmpty)
        let v2 = v2JSON(state: "SUBSCRIPTION_STATE_ACTIVE", start: "2024-01-01T00:00:00Z", expiry: "2024-02-01T00:00:00Z",
                        latestOrderId: "GPA.1", extra: "\"testPurchase\":{},")
        #expect(translator.translate(try record(.googleSubscriptionV2, v2, receivedAt: fetched, token: "t")) == marker(start))
        // PHP logs the empty marker object as `[]`: still a test purchase.
        let php = v2.replacingOccurrences(of: "\"testPurchase\":{}", with: "\"testPurchase\":[]")
        #expect(translator.translate(try record(.googleSubscriptionV2, php, receivedAt: fetched, token: "t")) == marker(start))
        let product = #"{"kind":"androidpublisher#productPurchase","purchaseTimeMillis":"1704067200000","purchaseState":0,"purchaseType":0}"#
        #expect(translator.translate(try record(.googleProductV1, product, token: "t", product: "p")) == marker(start, observedAt: start))
        // A backend that mapped the marker to a boolean: `false` (also "false", 0, null) is no test, `true` is one;
        // anything else is no marker at all, and says so.
        for value in ["false", "\"false\"", "0", "null"] {
            let real = v2.replacingOccurrences(of: "\"testPurchase\":{}", with: "\"testPurchase\":\(value)")
            #expect(!usedFacts(translator.translate(try record(.googleSubscriptionV2, real, receivedAt: fetched, token: "t"))).isEmpty,
                    "testPurchase: \(value)")
        }
        let boolean = v2.replacingOccurrences(of: "\"testPurchase\":{}", with: "\"testPurchase\":true")
        #expect(translator.translate(try record(.googleSubscriptionV2, boolean, receivedAt: fetched, token: "t")) == marker(start))
        let odd = v2.replacingOccurrences(of: "\"testPurchase\":{}", with: "\"testPurchase\":\"maybe\"")
        guard case .quarantined(.invalidPayload, let detail) = translator.translate(try record(.googleSubscriptionV2, odd, receivedAt: fetched, token: "t")) else {
            Issue.record("testPurchase: \"maybe\" not quarantined")
            return
        }
        #expect(detail.contains("testPurchase is neither an object nor a boolean"), "\(detail)")
    }

    @Test func wrongTypesAreInvalidPayload() throws {
        let v1 = v1JSON(start: 1_704_067_200_000, expiry: 1_706_745_600_000, orderId: "GPA.1", paymentState: 1, autoRenewing: true)
            .replacingOccurrences(of: "\"expiryTimeMillis\":\"1706745600000\"", with: "\"expiryTimeMillis\":{}")
        guard case .quarantined(.invalidPayload, let detail) = translator.translate(try record(.googleSubscriptionV1, v1, token: "t", product: "p")) else {
            Issue.record("not quarantined as invalid")
            return
        }
        #expect(detail.contains("expiryTimeMillis"))
        let noStart = #"{"kind":"androidpublisher#subscriptionPurchase","expiryTimeMillis":"5"}"#
        #expect(reason(translator.translate(try record(.googleSubscriptionV1, noStart, token: "t", product: "p"))) == .invalidPayload)
        let badTime = v2JSON(state: "SUBSCRIPTION_STATE_ACTIVE", start: "yesterday", expiry: "2024-02-01T00:00:00Z", latestOrderId: "GPA.1")
        #expect(reason(translator.translate(try record(.googleSubscriptionV2, badTime, token: "t"))) == .invalidPayload)
        let noTime = #"{"kind":"androidpublisher#subscriptionPurchaseV2","subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","lineItems":[]}"#
        #expect(reason(translator.translate(try record(.googleSubscriptionV2, noTime, token: "t", product: "p"))) == .invalidPayload)
    }

    @Test func voidedPurchaseAndProductPurchase() throws {
        let item = """
        {"kind":"androidpublisher#voidedPurchase","purchaseToken":"tok-1","purchaseTimeMillis":"1709553600000",\
        "voidedTimeMillis":"1711962000000","orderId":"GPA.1234-5678-9012-34567..0","voidedSource":1,"voidedReason":0,"refundType":1}
        """
        let voided = usedFacts(translator.translate(try record(.googleVoidedPurchase, item, receivedAt: 1_712_000_000_000)))
        #expect(voided == [Fact(platform: .google, subject: "tok-1", kind: GoogleFactKind.voided, at: 1_711_962_000_000,
                                observedAt: 1_712_000_000_000, ref: "GPA.1234-5678-9012-34567..0", detail: "1")])
        let product = """
        {"kind":"androidpublisher#productPurchase","purchaseTimeMillis":"1709553600000","purchaseState":0,"consumptionState":1,\
        "developerPayload":"","orderId":"GPA.9999-0000-1111-22222","purchaseType":null,"acknowledgementState":1,"regionCode":"US","quantity":1}
        """
        let bought = usedFacts(translator.translate(try record(.googleProductV1, product, receivedAt: 1_709_553_605_000,
                                                              token: "ptok", product: "coins_100", currency: "USD")))
        #expect(bought.first == Fact(platform: .google, subject: "ptok", kind: GoogleFactKind.oneTime, at: 1_709_553_600_000,
                                     observedAt: 1_709_553_605_000, ref: "GPA.9999-0000-1111-22222", detail: "0",
                                     productId: "coins_100", currency: "USD"))
    }

    /// `purchases.productsv2` (`ProductPurchaseV2`, 2025): the product and quantity in a line item, the purchase
    /// dated by `purchaseCompletionTime`, states and test purchases as names, not numbers.
    @Test func productPurchaseV2() throws {
        func body(state: String = "PURCHASED", completed: String? = "2024-03-04T12:00:00.000Z", extra: String = "",
                  items: String = #"{"productId":"coins_100","productOfferDetails":{"purchaseOptionId":"buy","offerTags":[],"quantity":3,"refundableQuantity":3,"consumptionState":"CONSUMPTION_STATE_CONSUMED","offerToken":"AeQ7"}}"#) -> String {
            """
            {"kind":"androidpublisher#productPurchaseV2","productLineItem":[\(items)],\
            "purchaseStateContext":{"purchaseState":"\(state)"},"orderId":"GPA.3301-2468-1357-90864",\
            \(completed.map { #""purchaseCompletionTime":"\#($0)","# } ?? "")\(extra)\
            "regionCode":"US","acknowledgementState":"ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED"}
            """
        }
        func translate(_ json: String, source: SourceKind = .googleProductV2, product: String? = nil) throws -> Translation {
            translator.translate(try record(source, json, receivedAt: 1_709_553_605_000, token: "ptok2", product: product, currency: "USD"))
        }
        let bought = usedFacts(try translate(body()))
        #expect(bought.first == Fact(platform: .google, subject: "ptok2", kind: GoogleFactKind.oneTime, at: 1_709_553_600_000,
                                     observedAt: 1_709_553_605_000, ref: "GPA.3301-2468-1357-90864", detail: "0;quantity=3",
                                     productId: "coins_100", currency: "USD"))
        // Under a v1 envelope too (the kind decides); without `purchaseCompletionTime` a pending purchase is no sale.
        #expect(usedFacts(try translate(body(), source: .googleProductV1)) == bought)
        #expect(usedFacts(try translate(body(state: "PENDING", completed: nil))).first?.detail == "2;quantity=3")
        #expect(usedFacts(try translate(body(state: "CANCELLED"))).first?.detail == "1;quantity=3")
        // PURCHASED without its completion time was bought by the fetch.
        let fetched = usedFacts(try translate(body(completed: nil))).first
        #expect(fetched?.detail == "0;quantity=3" && fetched?.at == 1_709_553_605_000)
        // A test purchase: excluded, its token marked.
        guard case .excluded(.test, let markers) = try translate(body(extra: #""testPurchaseContext":{"fopType":"TEST"},"#)) else {
            Issue.record("a test purchase was not excluded")
            return
        }
        #expect(markers.map(\.kind) == [.testPurchase])
        // Marked even with no time at all, so that its token's notifications are excluded with it.
        let undated = translator.translate(try record(.googleProductV2, body(completed: nil, extra: #""testPurchaseContext":{"fopType":"TEST"},"#),
                                                      token: "ptok2"))
        guard case .excluded(.test, let undatedMarkers) = undated else {
            Issue.record("an undated test purchase was not excluded: \(undated)")
            return
        }
        #expect(undatedMarkers.map(\.subject) == ["ptok2"])
        // And with no product anywhere either.
        let bare = #"{"kind":"androidpublisher#productPurchaseV2","productLineItem":[],"testPurchaseContext":{"fopType":"TEST"}}"#
        guard case .excluded(.test, _) = translator.translate(try record(.googleProductV2, bare, token: "ptok3")) else {
            Issue.record("a test purchase without a product was not excluded")
            return
        }
        // Two products under one token: the envelope's is read, the other set aside naming it.
        let two = #"{"productId":"coins_100"},{"productId":"gems_10","productOfferDetails":{"quantity":1}}"#
        let both = try translate(body(items: two), product: "gems_10")
        #expect(usedFacts(both).first?.productId == "gems_10" && usedFacts(both).first?.detail == "0")
        #expect(quarantinedParts(both).map(\.path) == ["productLineItem[0]"])
        #expect(quarantinedParts(both).first?.detail.contains("coins_100") == true)
        // Its only line item unreadable (a quantity of 5,000): no sale of the envelope's product, one unit, but
        // the record quarantined naming the field.
        let unreadable = #"{"productId":"coins_100","productOfferDetails":{"quantity":5000}}"#
        guard case .quarantined(.invalidPayload, let detail) = try translate(body(items: unreadable), product: "coins_100") else {
            Issue.record("a purchase of unreadable line items was used")
            return
        }
        #expect(detail.contains("quantity"), "\(detail)")
    }

    @Test func rfc3339Times() {
        #expect(RFC3339.millis("2024-02-29T23:00:00Z") == 1_709_247_600_000)
        #expect(RFC3339.millis("2024-02-29T23:00:00.987654321Z") == 1_709_247_600_987)
        #expect(RFC3339.millis("2024-03-01T00:00:00+01:00") == 1_709_247_600_000)
        #expect(RFC3339.millis("1969-12-31T23:59:59Z") == -1_000)
        #expect(RFC3339.millis("2024-02-29") == nil)
        #expect(RFC3339.millis("2024-13-01T00:00:00Z") == nil)
    }

    private func reason(_ translation: Translation) -> QuarantineReason? {
        if case .quarantined(let reason, _) = translation { return reason }
        return nil
    }
}

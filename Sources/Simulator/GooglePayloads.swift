import Foundation

/// What Google Play would have sent about one subscription chain at a given instant: RTDN Pub/Sub pushes,
/// `purchases.subscriptions.get` (v1) and `purchases.subscriptionsv2.get` (v2) resources, voided purchases and
/// `purchases.products.get` bodies, with Google's spellings (int64 as strings in v1, RFC 3339 in v2).
struct GooglePayloads {
    let catalog: Catalog
    let subscription: SimulatedSubscription
    static let packageName = Catalog.bundleId

    private var timeline: TimelineSubscription { subscription.timeline }

    private var region: String { (Catalog.storefronts[subscription.currency] ?? ("USA", "143441", "US")).google }

    /// The token whose latest order is current at `at`.
    func token(at: Int64) -> String {
        timeline.periods.last { $0.start <= at }?.token ?? timeline.id
    }

    private func linked(_ token: String) -> String? { subscription.tokens.first { $0.token == token }?.linked }

    private func autoRenew(at: Int64) -> (on: Bool, changedAt: Int64?) {
        guard let change = subscription.autoRenewChanges.last(where: { $0.at <= at }) else { return (true, nil) }
        return (change.on, change.on ? nil : change.at)
    }

    /// The subscription's state for `token` at `at`, as both resource versions describe it.
    private struct State {
        var order: TimelinePeriod
        var firstStart: Int64
        var expiry: Int64
        /// v1 `paymentState`: 0 pending (billing issue), 1 received, 2 free trial; nil when not shown.
        var paymentState: Int?
        var autoRenewing: Bool
        var cancelReason: Int?
        var userCancellation: Int64?
        var autoResume: Int64?
        /// v2 `subscriptionState`.
        var v2State: String
    }

    private func state(token: String, at: Int64, scheduledResume: Int64?) -> State? {
        let orders = timeline.periods.filter { $0.token == token && $0.start <= at }
        guard let order = orders.last, let first = orders.first else { return nil }
        let renew = autoRenew(at: at)
        // Before an upgrade the order shows the expiry it was sold with; the change ends it sooner.
        var s = State(order: order, firstStart: first.start, expiry: order.scheduledEnd ?? order.end,
                      paymentState: order.trial ? 2 : 1, autoRenewing: renew.on, cancelReason: nil,
                      userCancellation: nil, autoResume: nil, v2State: "SUBSCRIPTION_STATE_ACTIVE")
        if let r = order.revokedAt, r <= at {
            s.expiry = r; s.autoRenewing = false; s.cancelReason = 3; s.paymentState = 1
            s.v2State = "SUBSCRIPTION_STATE_EXPIRED"
            return s
        }
        if order.endReason == .replaced, order.end <= at {
            s.expiry = order.end; s.autoRenewing = false; s.cancelReason = 2
            s.v2State = "SUBSCRIPTION_STATE_EXPIRED"
            return s
        }
        if order.endReason == .billingIssue, order.end <= at,
           let episode = timeline.episodes.first(where: { $0.start == order.end }) {
            s.expiry = episode.graceEnd
            s.paymentState = 0
            if case .lost(let l) = episode.outcome, l <= at {
                s.autoRenewing = false; s.cancelReason = 1; s.paymentState = nil
                s.v2State = "SUBSCRIPTION_STATE_EXPIRED"
            } else {
                s.v2State = at < episode.graceEnd ? "SUBSCRIPTION_STATE_IN_GRACE_PERIOD" : "SUBSCRIPTION_STATE_ON_HOLD"
            }
            return s
        }
        if order.endReason == .paused, let resume = scheduledResume {
            s.autoResume = resume
            if order.end <= at {
                s.v2State = "SUBSCRIPTION_STATE_PAUSED"
                s.paymentState = nil
            }
            return s
        }
        if !renew.on {
            s.cancelReason = 0
            s.userCancellation = renew.changedAt
            s.v2State = order.end <= at ? "SUBSCRIPTION_STATE_EXPIRED" : "SUBSCRIPTION_STATE_CANCELED"
            if order.end <= at { s.paymentState = nil }
        }
        return s
    }

    /// The introductory offer `token` was bought with (its first paid order was one, after the free trial when it
    /// began with one), and its price in micros.
    private func introductoryOffer(token: String) -> (product: Catalog.Product, micros: Int64)? {
        guard let first = timeline.periods.first(where: { $0.token == token && !$0.trial }), first.introductory,
              let micros = first.priceMicros,
              let product = catalog.subscriptions.first(where: { $0.id == first.product }) else { return nil }
        return (product, micros)
    }

    /// A `purchases.subscriptions.get` body (v1, `SubscriptionPurchase`) for `token` at `at`.
    func resourceV1(token: String, at: Int64, scheduledResume: Int64?) -> JSONValue? {
        guard let s = state(token: token, at: at, scheduledResume: scheduledResume) else { return nil }
        let price = catalog.subscriptions.first { $0.id == s.order.product }?.prices[subscription.currency] ?? 0
        var members: [(String, JSONValue)] = [
            ("kind", .string("androidpublisher#subscriptionPurchase")),
            ("startTimeMillis", .string(String(s.firstStart))),
            ("expiryTimeMillis", .string(String(s.expiry))),
            ("autoRenewing", .bool(s.autoRenewing)),
            ("priceCurrencyCode", .string(subscription.currency)),
            ("priceAmountMicros", .string(String(price))),
            ("countryCode", .string(region)),
            ("developerPayload", .string("")),
        ]
        if let payment = s.paymentState { members.append(("paymentState", .int(payment))) }
        if let reason = s.cancelReason { members.append(("cancelReason", .int(reason))) }
        if let cancelled = s.userCancellation {
            members.append(("userCancellationTimeMillis", .string(String(cancelled))))
            members.append(("cancelSurveyResult", .object([("cancelSurveyReason", .int(1))])))
        }
        if let resume = s.autoResume { members.append(("autoResumeTimeMillis", .string(String(resume)))) }
        if let offer = introductoryOffer(token: token) {
            // Shown for the subscription's whole life; which orders it priced, the order numbers say.
            members.append(("introductoryPriceInfo", .object([
                ("introductoryPriceCurrencyCode", .string(subscription.currency)),
                ("introductoryPriceAmountMicros", .string(String(offer.micros))),
                ("introductoryPricePeriod", .string(offer.product.duration)),
                ("introductoryPriceCycles", .int(Int64(offer.product.introductoryCycles))),
            ])))
        }
        members.append(("orderId", .string(s.order.transactionId)))
        if let old = linked(token) { members.append(("linkedPurchaseToken", .string(old))) }
        if subscription.isTest { members.append(("purchaseType", .int(0))) }
        members.append(("acknowledgementState", .int(1)))
        return .object(members)
    }

    /// A `purchases.subscriptionsv2.get` body (`SubscriptionPurchaseV2`) for `token` at `at`.
    func resourceV2(token: String, at: Int64, scheduledResume: Int64?) -> JSONValue? {
        guard let s = state(token: token, at: at, scheduledResume: scheduledResume) else { return nil }
        let price = catalog.subscriptions.first { $0.id == s.order.product }?.prices[subscription.currency] ?? 0
        let basePlan = s.order.product.replacingOccurrences(of: "premium_", with: "")
        var offer: [(String, JSONValue)] = [("basePlanId", .string(basePlan))]
        if s.order.trial { offer.append(("offerId", .string("freetrial"))) }
        if introductoryOffer(token: token) != nil { offer.append(("offerId", .string("intro"))) }
        offer.append(("offerTags", .array([])))
        var item: [(String, JSONValue)] = [
            ("productId", .string(s.order.product)),
            ("expiryTime", .string(UTCCalendar.rfc3339(s.expiry))),
            ("autoRenewingPlan", .object([
                ("autoRenewEnabled", .bool(s.autoRenewing)),
                ("recurringPrice", .object([
                    ("currencyCode", .string(subscription.currency)),
                    ("units", .string(String(price / 1_000_000))),
                    ("nanos", .int((price % 1_000_000) * 1000)),
                ])),
            ])),
            ("offerDetails", .object(offer)),
        ]
        item.append(("offerPhase", .object([(s.order.trial ? "freeTrial" : "basePrice", .object([]))])))
        item.append(("latestSuccessfulOrderId", .string(s.order.transactionId)))
        var members: [(String, JSONValue)] = [
            ("kind", .string("androidpublisher#subscriptionPurchaseV2")),
            ("regionCode", .string(region)),
            ("lineItems", .array([.object(item)])),
            ("startTime", .string(UTCCalendar.rfc3339(s.firstStart))),
            ("subscriptionState", .string(s.v2State)),
            ("latestOrderId", .string(s.order.transactionId)),
        ]
        if let old = linked(token) { members.append(("linkedPurchaseToken", .string(old))) }
        if let resume = s.autoResume, s.v2State == "SUBSCRIPTION_STATE_PAUSED" {
            members.append(("pausedStateContext", .object([("autoResumeTime", .string(UTCCalendar.rfc3339(resume)))])))
        }
        if let cancelled = s.userCancellation {
            members.append(("canceledStateContext", .object([("userInitiatedCancellation", .object([
                ("cancelSurveyResult", .object([("reason", .string("CANCEL_SURVEY_REASON_NOT_ENOUGH_USAGE"))])),
                ("cancelTime", .string(UTCCalendar.rfc3339(cancelled))),
            ]))])))
        } else if s.cancelReason == 1 {
            members.append(("canceledStateContext", .object([("systemInitiatedCancellation", .object([]))])))
        } else if s.cancelReason == 2 {
            members.append(("canceledStateContext", .object([("replacementCancellation", .object([]))])))
        } else if s.cancelReason == 3 {
            members.append(("canceledStateContext", .object([("developerInitiatedCancellation", .object([]))])))
        }
        if subscription.isTest { members.append(("testPurchase", .object([]))) }
        members.append(("acknowledgementState", .string("ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED")))
        return .object(members)
    }

    /// A decoded RTDN (`DeveloperNotification`) with a `subscriptionNotification`.
    func subscriptionNotification(type: Int, token: String, product: String, at: Int64, timeAsNumber: Bool) -> JSONValue {
        .object([
            ("version", .string("1.0")),
            ("packageName", .string(GooglePayloads.packageName)),
            ("eventTimeMillis", timeAsNumber ? .int(at) : .string(String(at))),
            ("subscriptionNotification", .object([
                ("version", .string("1.0")),
                ("notificationType", .int(type)),
                ("purchaseToken", .string(token)),
                ("subscriptionId", .string(product)),
            ])),
        ])
    }

    /// A decoded RTDN with a `oneTimeProductNotification` (1 = ONE_TIME_PRODUCT_PURCHASED).
    static func oneTimeNotification(token: String, sku: String, at: Int64) -> JSONValue {
        .object([
            ("version", .string("1.0")),
            ("packageName", .string(packageName)),
            ("eventTimeMillis", .string(String(at))),
            ("oneTimeProductNotification", .object([
                ("version", .string("1.0")), ("notificationType", .int(1)),
                ("purchaseToken", .string(token)), ("sku", .string(sku)),
            ])),
        ])
    }

    /// A decoded RTDN `testNotification` (sent from the Play Console; excluded as a test).
    static func testNotification(at: Int64) -> JSONValue {
        .object([
            ("version", .string("1.0")),
            ("packageName", .string(packageName)),
            ("eventTimeMillis", .string(String(at))),
            ("testNotification", .object([("version", .string("1.0"))])),
        ])
    }

    /// A Pub/Sub push request carrying `notification` base64-encoded in `message.data`.
    static func pubSubPush(_ notification: JSONValue, messageId: String, publishedAt: Int64) -> JSONValue {
        let data = Array(notification.serialized.utf8)
        let base64 = Base64.encode(data)
        return .object([
            ("message", .object([
                ("attributes", .object([])),
                ("data", .string(base64)),
                ("messageId", .string(messageId)),
                ("message_id", .string(messageId)),
                ("publishTime", .string(UTCCalendar.rfc3339(publishedAt))),
                ("publish_time", .string(UTCCalendar.rfc3339(publishedAt))),
            ])),
            ("subscription", .string("projects/p/subscriptions/s")),
        ])
    }

    /// A `purchases.voidedpurchases.list` item for an order voided at `voidedAt`.
    static func voidedPurchase(token: String, order: TimelinePeriod, voidedAt: Int64) -> JSONValue {
        .object([
            ("kind", .string("androidpublisher#voidedPurchase")),
            ("purchaseToken", .string(token)),
            ("purchaseTimeMillis", .string(String(order.start))),
            ("voidedTimeMillis", .string(String(voidedAt))),
            ("orderId", .string(order.transactionId)),
            ("voidedSource", .int(0)),
            ("voidedReason", .int(1)),
        ])
    }

    /// A `purchases.products.get` body (`ProductPurchase`) of a one-time product.
    static func productPurchase(orderId: String, at: Int64, quantity: Int64, region: String, test: Bool) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("kind", .string("androidpublisher#productPurchase")),
            ("purchaseTimeMillis", .string(String(at))),
            ("purchaseState", .int(0)),
            ("consumptionState", .int(1)),
            ("developerPayload", .string("")),
            ("orderId", .string(orderId)),
            ("acknowledgementState", .int(1)),
            ("regionCode", .string(region)),
            ("quantity", .int(Int(quantity))),
        ]
        if test { members.append(("purchaseType", .int(0))) }
        return .object(members)
    }
}

import Facts
import Ingest

extension PlayStoreTranslator {
    /// The context a subscription resource needs from its envelope: its body names neither token nor product.
    private func context(_ envelope: Envelope, productFromBody: String? = nil) -> (token: String, product: String)? {
        guard let token = envelope.purchaseToken, !token.isEmpty,
              let product = productFromBody ?? envelope.productId, !product.isEmpty else { return nil }
        return (token, product)
    }

    /// `purchases.subscriptions.get` (v1 `SubscriptionPurchase`): int64 fields as strings, no state field.
    func subscriptionV1(_ body: PayloadFields, _ envelope: Envelope) throws(PayloadError) -> Translation {
        guard let (token, product) = context(envelope) else {
            return .quarantined(.missingContext, detail: "a v1 subscription resource needs purchase_token and subscription_id in its envelope")
        }
        if try body.int64("purchaseType") == 0 { return .excluded(.test) }
        let start = try body.requiredInt64("startTimeMillis")
        let expiry = try body.requiredInt64("expiryTimeMillis")
        let paymentState = try body.int64("paymentState").map(Int.init(truncatingIfNeeded:))
        let cancelReason = try body.int64("cancelReason").map(Int.init(truncatingIfNeeded:))
        let cancelledAt = try body.int64("userCancellationTimeMillis")
        let autoResumeAt = try body.int64("autoResumeTimeMillis")
        let autoRenewing = try body.bool("autoRenewing")
        let order = try body.string("orderId") ?? envelope.orderId
        let currency = try body.string("priceCurrencyCode") ?? envelope.currency
        var price = try body.int64("priceAmountMicros")
        _ = try body.int64("acknowledgementState")
        var flags: Fact.Flags = []
        if paymentState == 2 { flags.insert(.trial) }
        if autoRenewing == true { flags.insert(.on) }
        if let intro = try body.object("introductoryPriceInfo"), paymentState != 2,
           let cycles = try intro.int64("introductoryPriceCycles"), GoogleOrderId.index(order) < cycles {
            flags.insert(.introductory)
            price = try intro.int64("introductoryPriceAmountMicros") ?? price
        }
        // A fetch time is what tells grace (expiry ahead) from hold (expiry passed); without one, the latest
        // time the resource shows as past is the best lower bound (the expiry itself may lie ahead).
        let observedAt = envelope.receivedAt ?? max(start, cancelledAt ?? start)
        let state = GoogleSubscriptionState.v1(expiry: expiry, observedAt: observedAt, paymentState: paymentState,
                                               cancelReason: cancelReason, autoRenewing: autoRenewing,
                                               autoResumeAt: autoResumeAt)
        var facts = [Fact(platform: .google, subject: token, kind: GoogleFactKind.state, at: observedAt,
                          observedAt: observedAt, ref: order, detail: state.code, productId: product, end: expiry,
                          amountMicros: flags.contains(.trial) ? 0 : price, currency: currency, flags: flags),
                     Fact(platform: .google, subject: token, kind: GoogleFactKind.start, at: start,
                          observedAt: observedAt, productId: product)]
        if let linked = try body.string("linkedPurchaseToken") {
            facts.append(Fact(platform: .google, subject: token, kind: .link, at: start, observedAt: observedAt, ref: linked))
        }
        if let cancelledAt {
            facts.append(Fact(platform: .google, subject: token, kind: GoogleFactKind.cancel, at: cancelledAt,
                              observedAt: observedAt, detail: String(cancelReason ?? 0)))
        }
        if let autoResumeAt {
            facts.append(Fact(platform: .google, subject: token, kind: GoogleFactKind.pause, at: observedAt,
                              observedAt: observedAt, end: autoResumeAt))
        }
        facts += userFacts(token: token, at: start, observedAt: observedAt,
                           accountId: try body.string("obfuscatedExternalAccountId"), envelope: envelope)
        return .used(facts)
    }

    /// `purchases.subscriptionsv2.get` (`SubscriptionPurchaseV2`): RFC 3339 times, `subscriptionState`,
    /// `lineItems[]` carrying product, expiry and price; normalised into the same facts as v1.
    func subscriptionV2(_ body: PayloadFields, _ envelope: Envelope) throws(PayloadError) -> Translation {
        if body.has("testPurchase") { return .excluded(.test) }
        guard let items = try body.array("lineItems"), !items.isEmpty else {
            throw PayloadError(detail: "lineItems is missing or empty")
        }
        // Add-on purchases carry several line items; the envelope's product picks the one it is about.
        var item = items[0]
        for candidate in items where try candidate.string("productId") == envelope.productId {
            item = candidate
            break
        }
        guard let (token, product) = context(envelope, productFromBody: try item.string("productId")) else {
            return .quarantined(.missingContext, detail: "a v2 subscription resource needs purchase_token in its envelope")
        }
        let stateName = try body.string("subscriptionState") ?? "SUBSCRIPTION_STATE_UNSPECIFIED"
        let start = try body.time("startTime")
        let expiry = try item.time("expiryTime")
        var order = try body.string("latestOrderId")
        if order == nil { order = try item.string("latestSuccessfulOrderId") ?? envelope.orderId }
        _ = try body.string("acknowledgementState")

        var flags: Fact.Flags = []
        var price: Int64?
        var currency = envelope.currency
        if let plan = try item.object("autoRenewingPlan") {
            if try plan.bool("autoRenewEnabled") == true { flags.insert(.on) }
            if let recurring = try plan.object("recurringPrice") {
                currency = try recurring.string("currencyCode") ?? currency
                let units = try recurring.int64("units") ?? 0
                let nanos = try recurring.int64("nanos") ?? 0
                let (scaled, overflow) = units.multipliedReportingOverflow(by: 1_000_000)
                let (micros, carry) = scaled.addingReportingOverflow(nanos / 1_000)
                guard !overflow, !carry, (-999_999_999...999_999_999).contains(nanos) else {
                    throw PayloadError(detail: "recurringPrice is out of range: units \(units), nanos \(nanos)")
                }
                price = micros
            }
        }
        if let phase = try item.object("offerPhase") {
            if phase.has("freeTrial") {
                flags.insert(.trial)
                price = 0
            } else if phase.has("introductoryPrice") {
                // The recurring price is the base price; what an introductory phase charges is not in the resource.
                flags.insert(.introductory)
                price = nil
            }
        }

        var cancelReason: Int?
        var cancelledAt: Millis?
        if let context = try body.object("canceledStateContext") {
            if let user = try context.object("userInitiatedCancellation") {
                cancelReason = 0
                cancelledAt = try user.time("cancelTime")
            } else if context.has("systemInitiatedCancellation") {
                cancelReason = 1
            } else if context.has("replacementCancellation") {
                cancelReason = 2
            } else if context.has("developerInitiatedCancellation") {
                cancelReason = 3
            }
        }
        let autoResumeAt = try body.object("pausedStateContext")?.time("autoResumeTime")
        guard let observedAt = envelope.receivedAt ?? [start, cancelledAt].compactMap({ $0 }).max() else {
            throw PayloadError(detail: "neither received_at nor startTime is present")
        }
        let state = GoogleSubscriptionState(version: 2, state: stateName, paymentState: nil, cancelReason: cancelReason)
        var facts = [Fact(platform: .google, subject: token, kind: GoogleFactKind.state, at: observedAt,
                          observedAt: observedAt, ref: order, detail: state.code, productId: product, end: expiry,
                          amountMicros: price, currency: currency, flags: flags)]
        if let start {
            facts.append(Fact(platform: .google, subject: token, kind: GoogleFactKind.start, at: start,
                              observedAt: observedAt, productId: product))
        }
        if let linked = try body.string("linkedPurchaseToken") {
            facts.append(Fact(platform: .google, subject: token, kind: .link, at: start ?? observedAt,
                              observedAt: observedAt, ref: linked))
        }
        if let cancelledAt {
            facts.append(Fact(platform: .google, subject: token, kind: GoogleFactKind.cancel, at: cancelledAt,
                              observedAt: observedAt, detail: "0"))
        }
        if let autoResumeAt {
            facts.append(Fact(platform: .google, subject: token, kind: GoogleFactKind.pause, at: observedAt,
                              observedAt: observedAt, end: autoResumeAt))
        }
        let accountId = try body.object("externalAccountIdentifiers")?.string("obfuscatedExternalAccountId")
        facts += userFacts(token: token, at: start ?? observedAt, observedAt: observedAt, accountId: accountId, envelope: envelope)
        return .used(facts)
    }
}

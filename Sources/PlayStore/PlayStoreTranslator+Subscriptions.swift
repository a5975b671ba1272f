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
        let start = try body.requiredMillis("startTimeMillis")
        let expiry = try body.requiredMillis("expiryTimeMillis")
        let cancelledAt = try body.millis("userCancellationTimeMillis")
        let order = try body.string("orderId") ?? envelope.orderId
        // A fetch time is what tells grace (expiry ahead) from hold (expiry passed). Without one, the resource
        // proves that the order it shows had begun (one billing period before its expiry, see ShownPeriod) and
        // that a stated cancellation had happened; never its expiry, which may lie ahead.
        let shownStart = ShownPeriod.start(subscriptionStart: start, expiry: expiry, orderIndex: GoogleOrderId.index(order))
        let observedAt = envelope.receivedAt ?? max(shownStart, cancelledAt ?? shownStart)
        if try body.int64("purchaseType") == 0 { return testPurchase(token: token, at: start, observedAt: observedAt) }
        let paymentState = try body.int64("paymentState").map(Int.init(truncatingIfNeeded:))
        var cancelReason = try body.int64("cancelReason").map(Int.init(truncatingIfNeeded:))
        let autoResumeAt = try body.millis("autoResumeTimeMillis")
        let autoRenewing = try body.bool("autoRenewing")
        let currency = try body.string("priceCurrencyCode") ?? envelope.currency
        var price = try body.micros("priceAmountMicros")
        _ = try body.int64("acknowledgementState")
        var flags: Fact.Flags = envelope.receivedAt == nil ? .inferred : []
        if paymentState == 2 { flags.insert(.trial) }
        if autoRenewing == true { flags.insert(.on) }
        var parts = PartList()
        let intro = parts.read(body.name("introductoryPriceInfo"), body.json["introductoryPriceInfo"]) {
            () throws(PayloadError) -> (cycles: Int64?, micros: Int64?)? in
            guard let intro = try body.object("introductoryPriceInfo") else { return nil }
            return (try intro.int64("introductoryPriceCycles"), try intro.micros("introductoryPriceAmountMicros"))
        }
        if intro != nil { flags.insert(.offer) }
        // `priceChange.state` 0: a price increase awaits the user's consent, so a system cancellation declined it.
        let priceChangePending = parts.read(body.name("priceChange"), body.json["priceChange"]) {
            () throws(PayloadError) -> Bool? in try body.object("priceChange")?.int64("state") == 0
        }
        if cancelReason == 1, priceChangePending == true { cancelReason = GoogleSubscriptionState.declinedPriceIncrease }
        // The introductory price is charged for `introductoryPriceCycles` billing periods: orders 0 to cycles - 1,
        // unless the subscription began with a free trial, which this resource cannot tell (`TokenTimeline` moves
        // the cycles after a trial a resource showed).
        if let intro, paymentState != 2, let cycles = intro.cycles, GoogleOrderId.index(order) < cycles {
            flags.insert(.introductory)
            price = intro.micros ?? price
        }
        var state = GoogleSubscriptionState.v1(expiry: expiry, observedAt: observedAt, paymentState: paymentState,
                                               cancelReason: cancelReason, autoRenewing: autoRenewing,
                                               autoResumeAt: autoResumeAt)
        if let micros = intro?.micros, let cycles = intro?.cycles {
            state.introductoryOffer = GoogleSubscriptionState.IntroductoryOffer(micros: micros, cycles: cycles)
        }
        var facts: [GoogleFact] = [
            .state(GoogleFact.Snapshot(token: token, at: observedAt, order: order, expiry: expiry, state: state,
                                       productId: product, priceMicros: flags.contains(.trial) ? 0 : price,
                                       currency: currency, flags: flags)),
            .start(token: token, at: start, productId: product),
        ]
        if let linked = try body.string("linkedPurchaseToken") { facts.append(.link(token: token, at: start, from: linked)) }
        if let cancelledAt { facts.append(.cancel(token: token, at: cancelledAt, reason: cancelReason ?? 0)) }
        if let autoResumeAt { facts.append(.pause(token: token, at: observedAt, resumeAt: autoResumeAt)) }
        facts += userFacts(token: token, at: start, accountId: try body.string("obfuscatedExternalAccountId"),
                           envelope: envelope)
        return parts.translation(rows(facts, observedAt: observedAt))
    }

    /// One line item of a v2 resource: the product, its expiry and what it costs.
    private struct LineItem {
        var productId: String?
        var expiry: Millis?
        var order: String?
        var price: Int64?
        var currency: String?
        var flags: Fact.Flags = []
        /// The v1 `paymentState` its offer phase implies: 2 a free trial, 1 a charged phase (base, introductory
        /// or proration price); `nil` without an offer phase.
        var paymentState: Int?
        /// A price increase awaits the user's consent (`priceChangeDetails.priceChangeState` OUTSTANDING with
        /// `priceChangeMode` PRICE_INCREASE, or `priceStepUpConsentDetails.state` PENDING).
        var priceChangePending = false
        /// A prepaid plan (`prepaidPlan`): it never renews by itself, so its access ends as if auto-renewal were
        /// off from the start, and a top-up is a new linked purchase.
        var prepaid = false
        /// The product a deferred change will put in this item's place at the next renewal
        /// (`deferredItemReplacement.productId`); the resource may already list it, not yet owned.
        var replacedBy: String?

        /// The order that `items[primary]` shows, with its add-ons. A subscription with add-ons is one purchase
        /// token whose line items (a base plan and up to 49 add-ons) Google bills together, one order a billing
        /// period ("all items in the purchase must have the same recurring billing period"); metrics.md's period is
        /// that order, so add-ons are no periods of their own and their charges join the order's price, under the
        /// primary's product. An add-on of the order has the primary's `latestSuccessfulOrderId`; only when the
        /// primary states none, an item stating none either with an expiry within a day of the primary's. An item a
        /// deferred replacement names is not owned yet (Google states no order id for it) and never an add-on. The
        /// order's product, expiry and renewal settings are
        /// the primary's; its price is the sum of the items' charges, `nil` (unpriced, never guessed) when a charged
        /// item states none or another currency; it is a free trial only when every item is; an introductory or
        /// proration phase of any item marks the whole order so.
        static func order(_ items: [Self], primary: Int) -> Self {
            var order = items[primary]
            let primaryItem = items[primary]
            let dayMillis: Millis = 86_400_000
            let deferredTargets = Set(items.compactMap(\.replacedBy))
            for (index, other) in items.enumerated() where index != primary {
                if let product = other.productId, deferredTargets.contains(product) { continue }
                if let mine = primaryItem.order {
                    guard other.order == mine else { continue }
                } else {
                    guard other.order == nil, let mine = primaryItem.expiry, let theirs = other.expiry,
                          abs(mine - theirs) <= dayMillis else { continue }
                }
                order.add(other)
            }
            return order
        }

        /// Adds the charge and phase of `other`, an add-on of this item's order.
        private mutating func add(_ other: Self) {
            let otherIsTrial = other.flags.contains(.trial)
            if flags.contains(.trial), !otherIsTrial {
                // The order charged for the add-on though the base plan is in its free trial: a paid order.
                flags.remove(.trial)
                price = 0
                paymentState = other.paymentState
            }
            flags.formUnion(other.flags.intersection([.introductory, .prorated, .offer]))
            priceChangePending = priceChangePending || other.priceChangePending
            guard !otherIsTrial else { return }
            if let sum = price, let charge = other.price, other.currency == currency {
                let (total, overflow) = sum.addingReportingOverflow(charge)
                price = overflow ? nil : total
            } else {
                price = nil
            }
        }
    }

    /// A `SubscriptionPurchaseLineItem`; a line item that fails is quarantined as a part by the caller.
    private func lineItem(_ item: PayloadFields, envelope: Envelope) throws(PayloadError) -> LineItem {
        var line = LineItem(productId: try item.string("productId"), expiry: try item.time("expiryTime"),
                            order: try item.string("latestSuccessfulOrderId"), currency: envelope.currency)
        if let plan = try item.object("autoRenewingPlan") {
            if try plan.bool("autoRenewEnabled") == true { line.flags.insert(.on) }
            if let change = try plan.object("priceChangeDetails") {
                // Only an opt-in increase waits for consent; a decrease or an opt-out increase never cancels.
                let state = try change.string("priceChangeState"), mode = try change.string("priceChangeMode")
                line.priceChangePending = state == "OUTSTANDING" && mode == "PRICE_INCREASE"
            }
            // A step-up (since 2025) also waits for consent; without it by `consentDeadlineTime` Google cancels.
            if let stepUp = try plan.object("priceStepUpConsentDetails"), try stepUp.string("state") == "PENDING" {
                line.priceChangePending = true
            }
            if let recurring = try plan.object("recurringPrice") {
                line.currency = try recurring.string("currencyCode") ?? line.currency
                let units = try recurring.int64("units") ?? 0
                let nanos = try recurring.int64("nanos") ?? 0
                let (scaled, overflow) = units.multipliedReportingOverflow(by: 1_000_000)
                let (micros, carry) = scaled.addingReportingOverflow(nanos / 1_000)
                guard !overflow, !carry, (-999_999_999...999_999_999).contains(nanos), (0...Fact.largestAmountMicros).contains(micros) else {
                    throw PayloadError(detail: "\(recurring.path) is out of range: units \(units), nanos \(nanos)")
                }
                line.price = micros
            }
        }
        line.prepaid = try item.marker("prepaidPlan")
        line.replacedBy = try item.object("deferredItemReplacement")?.string("productId")
        if let phase = try item.object("offerPhase") {
            if try phase.marker("freeTrial") {
                line.flags.insert(.trial)
                line.price = 0
                line.paymentState = 2
            } else if try phase.marker("introductoryPrice") {
                // The recurring price is the base price; what an introductory phase charges is not in the resource.
                line.flags.insert(.introductory)
                line.price = nil
                line.paymentState = 1
            } else if try phase.marker("prorationPeriod") {
                // Time a change of plan credited (or an add-on aligned with its base plan): the replacement mode,
                // which the resource does not state, decides whether it was free or charged a difference or the
                // full price. The recurring price stays, as the rate its MRR runs at.
                line.flags.insert(.prorated)
                line.paymentState = 1
            } else if try phase.marker("basePrice") {
                line.paymentState = 1
            }
        }
        return line
    }

    /// `purchases.subscriptionsv2.get` (`SubscriptionPurchaseV2`): RFC 3339 times, `subscriptionState`,
    /// `lineItems[]` carrying product, expiry and price; normalised into the same facts as v1. A line item that
    /// cannot be read is quarantined as a part; the envelope's product picks among the readable ones (add-ons
    /// carry several), else the first.
    func subscriptionV2(_ body: PayloadFields, _ envelope: Envelope) throws(PayloadError) -> Translation {
        var parts = PartList()
        var items: [LineItem] = []
        /// The line items that could not be read: where, and the product they name if any.
        var unreadable: [(path: String, productId: String?)] = []
        let elements = try body.elements("lineItems")
        for element in elements {
            if let item = parts.read(element.path, element.value, { () throws(PayloadError) -> LineItem? in
                try lineItem(try body.element(element), envelope: envelope)
            }) {
                items.append(item)
            } else {
                unreadable.append((element.path, element.value["productId"]?.string))
            }
        }
        // The primary item is the envelope's product, else the first: when that one cannot be read, an add-on must
        // not stand in for it (the subscription would be filed under the add-on's product).
        let named = envelope.productId.flatMap { product in unreadable.first { $0.productId == product } }
        let first = unreadable.first { $0.path == elements.first?.path }
        if let lost = items.contains(where: { $0.productId != nil && $0.productId == envelope.productId }) ? nil : named ?? first,
           let part = parts.parts.first(where: { $0.path == lost.path }) {
            // Still a test purchase's marker, whatever its line items say.
            if try body.marker("testPurchase"), let token = envelope.purchaseToken, !token.isEmpty {
                let at = try body.time("startTime") ?? envelope.receivedAt ?? times.earliest
                return testPurchase(token: token, at: at, observedAt: envelope.receivedAt ?? at)
            }
            return .quarantined(part.reason, detail: part.detail + " (the subscription's primary line item)")
        }
        let primary = items.firstIndex { $0.productId != nil && $0.productId == envelope.productId } ?? items.indices.first
        var item = primary.map { LineItem.order(items, primary: $0) }
        // An unreadable item may be an add-on of the same order: its charge is unknown, so the order's is too.
        if !unreadable.isEmpty { item?.price = nil }
        guard let (token, product) = context(envelope, productFromBody: item?.productId) else {
            // Say what is missing: the token, or a product (a readable line item's, else the envelope's), and
            // why no line item gave one.
            if envelope.purchaseToken?.isEmpty ?? true {
                return .quarantined(.missingContext, detail: "a v2 subscription resource needs purchase_token in its envelope")
            }
            if let unreadable = parts.parts.first {
                return .quarantined(unreadable.reason, detail: unreadable.detail + ", and the envelope names no subscription_id")
            }
            return .quarantined(.missingContext, detail: "a v2 subscription resource needs a product: lineItems[].productId, or subscription_id in its envelope")
        }
        var stateName = try body.string("subscriptionState") ?? "SUBSCRIPTION_STATE_UNSPECIFIED"
        let start = try body.time("startTime")
        let expiry = item?.expiry
        var order = try body.string("latestOrderId")
        var paidOrder = false
        if order == nil, let successful = item?.order {
            order = successful
            paidOrder = true
        }
        if order == nil { order = envelope.orderId }
        _ = try body.string("acknowledgementState")

        let cancellation = parts.read(body.name("canceledStateContext"), body.json["canceledStateContext"]) {
            () throws(PayloadError) -> (reason: Int?, at: Millis?)? in
            guard let context = try body.object("canceledStateContext") else { return nil }
            if let user = try context.object("userInitiatedCancellation") { return (0, try user.time("cancelTime")) }
            if try context.marker("systemInitiatedCancellation") { return (1, nil) }
            if try context.marker("replacementCancellation") { return (2, nil) }
            if try context.marker("developerInitiatedCancellation") { return (3, nil) }
            return (nil, nil)
        }
        var cancelReason = cancellation?.reason
        if cancelReason == 1, item?.priceChangePending == true { cancelReason = GoogleSubscriptionState.declinedPriceIncrease }
        // An active prepaid plan runs to its expiry and stops unless topped up: for a plan that renews, Google
        // calls that cancelled by the user, and its end is a voluntary churn.
        if item?.prepaid == true, stateName == GoogleSubscriptionState.active {
            stateName = GoogleSubscriptionState.canceled
            cancelReason = cancelReason ?? 0
        }
        let cancelledAt = cancellation?.at
        let autoResumeAt = parts.read(body.name("pausedStateContext"), body.json["pausedStateContext"]) {
            () throws(PayloadError) -> Millis? in try body.object("pausedStateContext")?.time("autoResumeTime")
        }
        let provenAt = envelope.receivedAt
            ?? Self.provenTime(state: stateName, start: start, expiry: expiry, order: order, cancelledAt: cancelledAt)
        // A test purchase's marker, whatever time the resource lacks: every record of its token is excluded.
        if try body.marker("testPurchase") {
            let at = start ?? provenAt ?? times.earliest
            return testPurchase(token: token, at: at, observedAt: provenAt ?? at)
        }
        guard let observedAt = provenAt else {
            // Google sets no startTime on a purchase still pending (or cancelled before it was paid): it granted
            // nothing, so there is nothing to date and nothing a report counts.
            if stateName == GoogleSubscriptionState.pending || stateName == GoogleSubscriptionState.pendingPurchaseCanceled {
                return .used([], parts: parts.parts)
            }
            throw PayloadError(detail: "neither received_at nor startTime is present")
        }
        let state = GoogleSubscriptionState(version: 2, state: stateName, paymentState: item?.paymentState,
                                            cancelReason: cancelReason)
        var flags = item?.flags ?? []
        if envelope.receivedAt == nil { flags.insert(.inferred) }
        if paidOrder { flags.insert(.paidOrder) }
        var facts: [GoogleFact] = [
            .state(GoogleFact.Snapshot(token: token, at: observedAt, order: order, expiry: expiry, state: state,
                                       productId: product, priceMicros: item?.price,
                                       currency: item?.currency ?? envelope.currency, flags: flags)),
        ]
        if let start { facts.append(.start(token: token, at: start, productId: product)) }
        if let linked = try body.string("linkedPurchaseToken") {
            facts.append(.link(token: token, at: start ?? observedAt, from: linked))
        }
        if let cancelledAt { facts.append(.cancel(token: token, at: cancelledAt, reason: 0)) }
        if let autoResumeAt { facts.append(.pause(token: token, at: observedAt, resumeAt: autoResumeAt)) }
        let accountId = parts.read(body.name("externalAccountIdentifiers"), body.json["externalAccountIdentifiers"]) {
            () throws(PayloadError) -> String? in
            try body.object("externalAccountIdentifiers")?.string("obfuscatedExternalAccountId")
        }
        facts += userFacts(token: token, at: start ?? observedAt, accountId: accountId, envelope: envelope)
        return parts.translation(rows(facts, observedAt: observedAt))
    }

    /// The latest time a v2 resource without `received_at` proves it was fetched at or after: past its expiry
    /// when its state says the expiry has passed (expired, on hold, paused); else the start of the order it shows
    /// (``ShownPeriod``) or a later stated cancellation. `nil` without `startTime`.
    private static func provenTime(state: String, start: Millis?, expiry: Millis?, order: String?,
                                   cancelledAt: Millis?) -> Millis? {
        guard let start else { return nil }
        switch state {
        case GoogleSubscriptionState.expired, GoogleSubscriptionState.onHold, GoogleSubscriptionState.paused:
            return max(start, expiry ?? start, cancelledAt ?? start)
        default:
            let shown = expiry.map { ShownPeriod.start(subscriptionStart: start, expiry: $0, orderIndex: GoogleOrderId.index(order)) } ?? start
            return max(shown, cancelledAt ?? shown)
        }
    }
}

import Facts
import Ingest

extension PlayStoreTranslator {
    /// `purchases.voidedpurchases.list`: one `voidedPurchase` item, or a whole list response (`voidedPurchases`),
    /// whose unusable items are quarantined as parts while the others are used.
    func voided(_ body: PayloadFields, _ envelope: Envelope) throws(PayloadError) -> Translation {
        guard body.has("voidedPurchases") else {
            return .used([try voidedItem(body, envelope: envelope, single: true)])
        }
        let elements = try body.elements("voidedPurchases")
        var parts = PartList()
        var facts: [Fact] = []
        for element in elements {
            if let fact = parts.read(element.path, element.value, { () throws(PayloadError) -> Fact? in
                try voidedItem(try body.element(element), envelope: envelope, single: elements.count == 1)
            }) {
                facts.append(fact)
            }
        }
        return parts.translation(facts)
    }

    /// The `voided` fact of one `VoidedPurchase`; the envelope's token and order stand in only for a lone item.
    private func voidedItem(_ item: PayloadFields, envelope: Envelope, single: Bool) throws(PayloadError) -> Fact {
        guard let token = try item.string("purchaseToken") ?? (single ? envelope.purchaseToken : nil) else {
            throw PayloadError(reason: .missingContext, detail: "\(item.name("purchaseToken")) is missing")
        }
        let voidedAt = try item.requiredMillis("voidedTimeMillis")
        _ = try item.millis("purchaseTimeMillis")
        let order = try item.string("orderId") ?? (single ? envelope.orderId : nil)
        // A `VoidedPurchase` has no `refundType` (only the voided-purchase RTDN does): `voidedQuantity`, sent for
        // a quantity-based partial refund alone, is what says the refund was partial.
        let refundType = try item.int64("refundType")
        let voidedQuantity = try item.quantity("voidedQuantity")
        return GoogleFactCodec.encode(.voided(token: token, at: voidedAt, order: order, refundType: refundType,
                                              quantity: voidedQuantity),
                                      observedAt: envelope.receivedAt ?? voidedAt)
    }

    /// `purchases.products.get` (`ProductPurchase`): a one-time product; token and product from the envelope.
    /// `purchaseType` 0 (a license tester's purchase) is a test: excluded, and its token marked; 1 (a promo code)
    /// and 2 (rewarded: an ad watched instead of paying) were not paid for, so they are no sale.
    func product(_ body: PayloadFields, _ envelope: Envelope) throws(PayloadError) -> Translation {
        guard let token = envelope.purchaseToken, !token.isEmpty, let product = envelope.productId, !product.isEmpty else {
            return .quarantined(.missingContext, detail: "a product purchase needs purchase_token and product_id in its envelope")
        }
        let purchasedAt = try body.requiredMillis("purchaseTimeMillis")
        let observedAt = envelope.receivedAt ?? purchasedAt
        let purchaseType = try body.int64("purchaseType")
        if purchaseType == 0 { return testPurchase(token: token, at: purchasedAt, observedAt: observedAt) }
        let purchaseState = try body.int64("purchaseState") ?? 0
        _ = try body.int64("consumptionState")
        let quantity = try body.quantity("quantity") ?? 1
        let order = try body.string("orderId") ?? envelope.orderId
        let facts: [GoogleFact] = [.oneTime(token: token, at: purchasedAt, order: order,
                                            purchaseState: Int(truncatingIfNeeded: purchaseState), quantity: quantity,
                                            productId: product, currency: envelope.currency,
                                            free: purchaseType == 1 || purchaseType == 2)]
            + userFacts(token: token, at: purchasedAt, accountId: try body.string("obfuscatedExternalAccountId"),
                        envelope: envelope)
        return .used(rows(facts, observedAt: observedAt))
    }

    /// `purchases.productsv2.getproductpurchasev2` (`ProductPurchaseV2`, 2025): a one-time product as the v2 API
    /// shows it; the token from the envelope, the product from its `productLineItem` (the envelope's product
    /// picks among several, else the first). It is bought at `purchaseCompletionTime`, which Google sets once the
    /// payment completed (else at `received_at`); `purchaseStateContext.purchaseState` CANCELLED or PENDING is no
    /// sale (v1's `purchaseState` 1 and 2). A `testPurchaseContext` marks a test purchase. The ledger keeps one
    /// product per token, so a line item beside the one read is quarantined as a part, naming its product.
    func productV2(_ body: PayloadFields, _ envelope: Envelope) throws(PayloadError) -> Translation {
        guard let token = envelope.purchaseToken, !token.isEmpty else {
            return .quarantined(.missingContext, detail: "a v2 product purchase needs purchase_token in its envelope")
        }
        let completedAt = try body.time("purchaseCompletionTime")
        let state = try body.object("purchaseStateContext")?.string("purchaseState")
        _ = try body.string("acknowledgementState")
        if try body.marker("testPurchaseContext") {
            // Marked whatever else is missing (a time, a product), so that the token's notifications are excluded
            // with it.
            let at = completedAt ?? envelope.receivedAt ?? times.earliest
            return testPurchase(token: token, at: at, observedAt: envelope.receivedAt ?? at)
        }
        var parts = PartList()
        var items: [(path: String, value: JSON, productId: String, quantity: Int64)] = []
        for element in try body.elements("productLineItem") {
            if let item = parts.read(element.path, element.value, { () throws(PayloadError) -> (String, JSON, String, Int64)? in
                let line = try body.element(element)
                let offer = try line.object("productOfferDetails")
                _ = try offer?.string("consumptionState")
                return (element.path, element.value, try line.requiredString("productId"), try offer?.quantity("quantity") ?? 1)
            }) {
                items.append(item)
            }
        }
        // Only unreadable line items: the sale's product and quantity are unknown, whatever the envelope names.
        if items.isEmpty, let unreadable = parts.parts.first { return .quarantined(unreadable.reason, detail: unreadable.detail) }
        let chosen = items.firstIndex { $0.productId == envelope.productId } ?? items.indices.first
        guard let product = chosen.map({ items[$0].productId }) ?? envelope.productId, !product.isEmpty else {
            if let unreadable = parts.parts.first { return .quarantined(unreadable.reason, detail: unreadable.detail) }
            return .quarantined(.missingContext, detail: "a v2 product purchase needs a product: productLineItem[].productId, or product_id in its envelope")
        }
        for (index, item) in items.enumerated() where index != chosen {
            parts.setAside(item.path, item.value, PayloadError(
                reason: .unrecognized,
                detail: "\(item.path) is a second product (\(item.productId)) of one purchase token, which the ledger does not keep"))
        }
        guard let purchasedAt = completedAt ?? envelope.receivedAt else {
            throw PayloadError(detail: "neither purchaseCompletionTime nor received_at is present")
        }
        let observedAt = envelope.receivedAt ?? purchasedAt
        // v1's numbers: 0 purchased, 1 cancelled, 2 pending. PURCHASED without its completion time (which Google
        // sets with it) was bought by the fetch; a completion time proves the payment under an unknown state's name
        // too, and without either nothing was paid yet.
        let purchaseState = switch state {
        case "CANCELLED": 1
        case "PENDING": 2
        case "PURCHASED": 0
        default: completedAt == nil ? 2 : 0
        }
        let quantity = chosen.map { items[$0].quantity } ?? 1
        let facts: [GoogleFact] = [.oneTime(token: token, at: purchasedAt, order: try body.string("orderId") ?? envelope.orderId,
                                            purchaseState: purchaseState, quantity: quantity, productId: product,
                                            currency: envelope.currency, free: false)]
            + userFacts(token: token, at: purchasedAt, accountId: try body.string("obfuscatedExternalAccountId"),
                        envelope: envelope)
        return parts.translation(rows(facts, observedAt: observedAt))
    }
}

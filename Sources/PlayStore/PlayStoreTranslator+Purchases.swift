import Facts
import Ingest

extension PlayStoreTranslator {
    /// `purchases.voidedpurchases.list`: one `voidedPurchase` item, or a whole list response (`voidedPurchases`).
    func voided(_ body: PayloadFields, _ envelope: Envelope) throws(PayloadError) -> Translation {
        let items = try body.array("voidedPurchases") ?? [body]
        var facts: [Fact] = []
        for item in items {
            guard let token = try item.string("purchaseToken") ?? (items.count == 1 ? envelope.purchaseToken : nil) else {
                return .quarantined(.missingContext, detail: "a voided purchase without purchaseToken")
            }
            let voidedAt = try item.requiredInt64("voidedTimeMillis")
            _ = try item.int64("purchaseTimeMillis")
            let order = try item.string("orderId") ?? (items.count == 1 ? envelope.orderId : nil)
            let refundType = try item.int64("refundType")
            facts.append(Fact(platform: .google, subject: token, kind: GoogleFactKind.voided, at: voidedAt,
                              observedAt: envelope.receivedAt ?? voidedAt, ref: order, detail: refundType.map(String.init)))
        }
        return .used(facts)
    }

    /// `purchases.products.get` (`ProductPurchase`): a one-time product; token and product from the envelope.
    func product(_ body: PayloadFields, _ envelope: Envelope) throws(PayloadError) -> Translation {
        guard let token = envelope.purchaseToken, !token.isEmpty, let product = envelope.productId, !product.isEmpty else {
            return .quarantined(.missingContext, detail: "a product purchase needs purchase_token and product_id in its envelope")
        }
        if try body.int64("purchaseType") == 0 { return .excluded(.test) }
        let purchasedAt = try body.requiredInt64("purchaseTimeMillis")
        let purchaseState = try body.int64("purchaseState") ?? 0
        _ = try body.int64("consumptionState")
        _ = try body.int64("quantity")
        let order = try body.string("orderId") ?? envelope.orderId
        let observedAt = envelope.receivedAt ?? purchasedAt
        var facts = [Fact(platform: .google, subject: token, kind: GoogleFactKind.oneTime, at: purchasedAt,
                          observedAt: observedAt, ref: order, detail: String(purchaseState), productId: product,
                          currency: envelope.currency)]
        facts += userFacts(token: token, at: purchasedAt, observedAt: observedAt,
                           accountId: try body.string("obfuscatedExternalAccountId"), envelope: envelope)
        return .used(facts)
    }
}

import Facts
import Ingest

extension PlayStoreTranslator {
    /// A real-time developer notification, already decoded from its Pub/Sub push (a push whose `message.data`
    /// is still base64 is decoded here). `eventTimeMillis` (string or number) is both `at` and `observedAt`.
    func notification(_ pushOrNotification: PayloadFields, _ envelope: Envelope) throws(PayloadError) -> Translation {
        var fields = pushOrNotification
        if let message = try fields.object("message"), let data = try message.string("data") {
            guard let bytes = Base64URL.decode(data), let decoded = try? JSONParser.parse(bytes), case .object = decoded else {
                throw PayloadError(detail: "message.data is not base64 of a JSON object")
            }
            fields = PayloadFields(decoded)
            if let package = try fields.string("packageName"), !packageNames.isEmpty, !packageNames.contains(package) {
                return .quarantined(.wrongPackage, detail: "package \(package) is not one of \(packageNames.sorted().joined(separator: ", "))")
            }
        }
        if fields.has("testNotification") { return .excluded(.test) }
        guard let eventTime = try fields.int64("eventTimeMillis") ?? envelope.receivedAt else {
            throw PayloadError(detail: "eventTimeMillis is missing")
        }
        if let subscription = try fields.object("subscriptionNotification") {
            let token = try subscription.requiredString("purchaseToken")
            let type = try subscription.requiredInt64("notificationType")
            let product = try subscription.string("subscriptionId") ?? envelope.productId
            var facts = [Fact(platform: .google, subject: token, kind: GoogleFactKind.event, at: eventTime,
                              observedAt: eventTime, detail: String(type), productId: product)]
            facts += userFacts(token: token, at: eventTime, observedAt: eventTime, accountId: nil, envelope: envelope)
            return .used(facts)
        }
        if let oneTime = try fields.object("oneTimeProductNotification") {
            let token = try oneTime.requiredString("purchaseToken")
            let type = try oneTime.requiredInt64("notificationType")
            let product = try oneTime.string("sku") ?? envelope.productId
            var facts = [Fact(platform: .google, subject: token, kind: GoogleFactKind.oneTimeEvent, at: eventTime,
                              observedAt: eventTime, detail: String(type), productId: product)]
            facts += userFacts(token: token, at: eventTime, observedAt: eventTime, accountId: nil, envelope: envelope)
            return .used(facts)
        }
        if let voided = try fields.object("voidedPurchaseNotification") {
            let token = try voided.requiredString("purchaseToken")
            let order = try voided.string("orderId") ?? envelope.orderId
            let refundType = try voided.int64("refundType")
            _ = try voided.int64("productType")
            return .used([Fact(platform: .google, subject: token, kind: GoogleFactKind.voided, at: eventTime,
                               observedAt: eventTime, ref: order, detail: refundType.map(String.init))])
        }
        return .quarantined(.unrecognized, detail: "an RTDN without subscriptionNotification, oneTimeProductNotification, voidedPurchaseNotification or testNotification")
    }
}

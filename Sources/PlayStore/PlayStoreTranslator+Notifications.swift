import Facts
import Ingest

extension PlayStoreTranslator {
    /// A real-time developer notification, already decoded from its Pub/Sub push (a push whose `message.data`
    /// is still base64 is decoded here). `eventTimeMillis` (string or number, milliseconds, inside ``times``) is
    /// both `at` and `observedAt`; without it, the envelope's `received_at`.
    func notification(_ pushOrNotification: PayloadFields, _ envelope: Envelope) throws(PayloadError) -> Translation {
        var fields = pushOrNotification
        if let message = try fields.object("message"), let data = try message.string("data") {
            guard let bytes = Base64URL.decode(data), let decoded = try? JSONParser.parse(bytes), case .object = decoded else {
                throw PayloadError(detail: "message.data is not base64 of a JSON object")
            }
            fields = PayloadFields(decoded, times: times)
            if let package = try fields.string("packageName"), !packageNames.isEmpty, !packageNames.contains(package) {
                return .quarantined(.wrongPackage, detail: "package \(package) is not one of \(packageNames.sorted().joined(separator: ", "))")
            }
        }
        if fields.has("testNotification") { return .excluded(.test) }
        guard let eventTime = try fields.millis("eventTimeMillis") ?? envelope.receivedAt else {
            throw PayloadError(detail: "eventTimeMillis is missing")
        }
        if let subscription = try fields.object("subscriptionNotification") {
            return .used(try eventFacts(subscription, kind: GoogleFactKind.event, productKey: "subscriptionId",
                                        at: eventTime, envelope: envelope))
        }
        if let oneTime = try fields.object("oneTimeProductNotification") {
            return .used(try eventFacts(oneTime, kind: GoogleFactKind.oneTimeEvent, productKey: "sku",
                                        at: eventTime, envelope: envelope))
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

    /// The `event` (or `one_time_event`) fact of a subscription or one-time product notification: its type
    /// number kept raw (unknown ones too), at the notification's event time, plus the user link.
    private func eventFacts(_ notification: PayloadFields, kind: Fact.Kind, productKey: String, at eventTime: Millis,
                            envelope: Envelope) throws(PayloadError) -> [Fact] {
        let token = try notification.requiredString("purchaseToken")
        let type = try notification.requiredInt64("notificationType")
        let product = try notification.string(productKey) ?? envelope.productId
        return [Fact(platform: .google, subject: token, kind: kind, at: eventTime, observedAt: eventTime,
                     detail: String(type), productId: product)]
            + userFacts(token: token, at: eventTime, observedAt: eventTime, accountId: nil, envelope: envelope)
    }
}

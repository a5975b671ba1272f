import Facts
import Ingest

extension PlayStoreTranslator {
    /// A real-time developer notification, already decoded from its Pub/Sub message (a push or a pulled message
    /// whose `message.data` is still base64 is decoded here), or a Pub/Sub pull response holding several
    /// (``pulledNotifications(_:_:)``). `eventTimeMillis` (string or number, milliseconds, inside ``times``) is
    /// both `at` and `observedAt`; without it, the envelope's `received_at`.
    func notification(_ pushOrNotification: PayloadFields, _ envelope: Envelope) throws(PayloadError) -> Translation {
        // `json[...]`, not `has`: an empty pull written as `"receivedMessages": null` is a pull all the same.
        if pushOrNotification.json["receivedMessages"] != nil { return try pulledNotifications(pushOrNotification, envelope) }
        return try oneNotification(pushOrNotification, envelope)
    }

    /// One notification, decoded or in its Pub/Sub message.
    private func oneNotification(_ pushOrNotification: PayloadFields, _ envelope: Envelope) throws(PayloadError) -> Translation {
        var fields = pushOrNotification
        // A push or a pulled message wraps the Pub/Sub message; a bare one (a string `data`) is it.
        let message = try fields.object("message") ?? (fields.json["data"]?.string != nil ? fields : nil)
        if let message, let data = try message.string("data") {
            guard let bytes = Base64URL.decode(data) else { throw PayloadError(detail: "message.data is not base64") }
            let decoded: JSON
            do {
                decoded = try JSONParser.parse(bytes)
            } catch {
                throw PayloadError(reason: error.quarantineReason, detail: "message.data: \(error)")
            }
            guard case .object = decoded else { throw PayloadError(detail: "message.data is not base64 of a JSON object") }
            fields = PayloadFields(decoded, times: times)
            // The notification's own package, else the envelope's (a wrapper has none of its own).
            if let package = try fields.string("packageName") ?? envelope.packageName, !packageNames.isEmpty,
               !packageNames.contains(package) {
                return .quarantined(.wrongPackage, detail: "package \(package) is not one of \(packageNames.sorted().joined(separator: ", "))")
            }
        }
        if fields.has("testNotification") { return .excluded(.test) }
        guard let eventTime = try fields.millis("eventTimeMillis") ?? envelope.receivedAt else {
            throw PayloadError(detail: "eventTimeMillis is missing")
        }
        if let subscription = try fields.object("subscriptionNotification") {
            return .used(try eventFacts(subscription, oneTime: false, productKey: "subscriptionId",
                                        at: eventTime, envelope: envelope))
        }
        if let oneTime = try fields.object("oneTimeProductNotification") {
            return .used(try eventFacts(oneTime, oneTime: true, productKey: "sku", at: eventTime, envelope: envelope))
        }
        if let voided = try fields.object("voidedPurchaseNotification") {
            let token = try voided.requiredString("purchaseToken")
            let order = try voided.string("orderId") ?? envelope.orderId
            let refundType = try voided.int64("refundType")
            _ = try voided.int64("productType")
            return .used(rows([.voided(token: token, at: eventTime, order: order, refundType: refundType, quantity: nil)],
                              observedAt: eventTime))
        }
        if fields.has("pendingRefundReviewNotification") {
            // A refund request under review (since 2025): nothing is refunded yet, and a refund granted later
            // comes as a voided purchase.
            return .used([])
        }
        return .quarantined(.unrecognized, detail: "an RTDN without subscriptionNotification, oneTimeProductNotification, voidedPurchaseNotification, pendingRefundReviewNotification or testNotification")
    }

    /// A Pub/Sub pull response (`{"receivedMessages": [{"ackId", "message": {"data", "messageId", "publishTime"},
    /// "deliveryAttempt"}]}`): each message's notification, dated by its `eventTimeMillis`, else the record's
    /// `received_at`, else the message's `publishTime`. A message that cannot be used is quarantined as a part
    /// (`receivedMessages[2]`); test notifications state nothing, and a response of test notifications alone is
    /// excluded as one. A message pulled again (a new `ackId`) states the same facts, which the ledger keeps once.
    private func pulledNotifications(_ response: PayloadFields, _ envelope: Envelope) throws(PayloadError) -> Translation {
        let elements = try response.elements("receivedMessages")
        var parts = PartList()
        var facts: [Fact] = []
        var tests = 0
        for element in elements {
            let stated = parts.read(element.path, element.value) { () throws(PayloadError) -> [Fact]? in
                let received = try response.element(element)
                guard let message = try received.object("message"), message.has("data") else {
                    throw PayloadError(detail: "\(received.name("message")).data is missing")
                }
                var dated = envelope
                if dated.receivedAt == nil, let published = try message.string("publishTime").flatMap(RFC3339.millis),
                   times.contains(published) {
                    dated.receivedAt = published
                }
                switch try oneNotification(received, dated) {
                case .used(let facts, _): return facts
                case .excluded: tests += 1; return nil
                case .quarantined(let reason, let detail): throw PayloadError(reason: reason, detail: detail)
                }
            }
            facts += stated ?? []
        }
        if facts.isEmpty, parts.parts.isEmpty, tests > 0, tests == elements.count { return .excluded(.test) }
        return parts.translation(facts)
    }

    /// The `event` (or `one_time_event`) fact of a subscription or one-time product notification: its type
    /// number kept raw (unknown ones too), at the notification's event time, plus the user link.
    private func eventFacts(_ notification: PayloadFields, oneTime: Bool, productKey: String, at eventTime: Millis,
                            envelope: Envelope) throws(PayloadError) -> [Fact] {
        let token = try notification.requiredString("purchaseToken")
        let type = Int(truncatingIfNeeded: try notification.requiredInt64("notificationType"))
        let product = try notification.string(productKey) ?? envelope.productId
        let event: GoogleFact = oneTime ? .oneTimeEvent(token: token, at: eventTime, type: type, productId: product)
            : .event(token: token, at: eventTime, type: type, productId: product)
        return rows([event] + userFacts(token: token, at: eventTime, accountId: nil, envelope: envelope), observedAt: eventTime)
    }
}

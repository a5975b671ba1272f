import Facts

/// Recognises a store payload by its shape, for records without a `source` (raw payloads, envelopes that name
/// none), and unwraps the two wrappers the stores put around payloads: the App Store V2 `signedPayload` and
/// the Pub/Sub push around a Google RTDN.
///
/// Shapes, first match wins (member names exactly as the stores send them):
///
/// | shape | kind |
/// |---|---|
/// | `signedPayload` (a JWS) | `appleNotificationV2`; payload = `.jws(signedPayload)` |
/// | `notification_type` | `appleNotificationV1` |
/// | `status` + (`receipt` or `latest_receipt_info`) | `appleVerifyReceipt` |
/// | `message.data` + `subscription` (Pub/Sub push) | `googleRTDN`; payload = the base64-decoded RTDN object |
/// | `packageName` + one of `subscriptionNotification`, `oneTimeProductNotification`, `voidedPurchaseNotification`, `testNotification` | `googleRTDN` (already decoded) |
/// | `kind` = `androidpublisher#subscriptionPurchase` | `googleSubscriptionV1` |
/// | `kind` = `androidpublisher#subscriptionPurchaseV2` | `googleSubscriptionV2` |
/// | `kind` = `androidpublisher#productPurchase` | `googleProductV1` |
/// | `kind` = `androidpublisher#voidedPurchase`, or `voidedTimeMillis` + `purchaseToken` | `googleVoidedPurchase` |
/// | `expiryTimeMillis` + `startTimeMillis` (v1 subscription without `kind`) | `googleSubscriptionV1` |
/// | `subscriptionState` + `lineItems` (v2 without `kind`) | `googleSubscriptionV2` |
/// | `purchaseTimeMillis` + `purchaseState` (product purchase without `kind`) | `googleProductV1` |
/// | a string that is a JWS whose payload has `notificationType` | `appleNotificationV2`; payload = `.jws(text)` |
/// | a JWS string whose payload has `transactionId` | `appleTransaction`; payload = `.jws(text)` |
/// | a JWS string whose payload has `autoRenewProductId` or `autoRenewStatus` (and no `transactionId`) | `appleRenewalInfo`; payload = `.jws(text)` |
/// | anything else | rejected `unrecognized`, the detail naming up to 10 top-level keys |
///
/// JWS payloads are decoded here **unverified**, only to recognise them and to read `notificationUUID`; the
/// `AppStore` module verifies every JWS before any fact is taken from it.
struct PayloadSniffer {
    /// A recognised payload and what its wrapper said.
    struct Sniffed: Sendable, Hashable {
        var source: SourceKind
        var payload: Payload
        /// Pub/Sub `messageId`: the push's identity (Pub/Sub redelivers the same message).
        var messageId: String?
        /// App Store V2 `notificationUUID` (unverified): the notification's identity.
        var notificationUUID: String?
        /// Pub/Sub `publishTime` (ms, UTC).
        var publishedAt: Millis?
        /// The JWS payload as decoded here (unverified), when it decodes.
        var jws: CompactJWS?
    }

    static let rtdnMembers = ["subscriptionNotification", "oneTimeProductNotification", "voidedPurchaseNotification",
                              "testNotification"]

    func sniff(_ value: JSON) throws(RecordRejection) -> Sniffed {
        switch value {
        case .string(let text):
            return try sniffJWS(text)
        case .object(let object):
            return try sniff(object)
        default:
            throw RecordRejection(reason: .unrecognized, detail: "a JSON \(JSON.typeName(value)), not a store payload")
        }
    }

    private func sniff(_ object: JSONObject) throws(RecordRejection) -> Sniffed {
        if let signed = object["signedPayload"] {
            guard case .string(let text) = signed, !text.isEmpty else {
                throw RecordRejection(reason: .invalidPayload, detail: "signedPayload is not a string")
            }
            let jws = CompactJWS(text)
            let uuid = jws?.payload["notificationUUID"]?.nonEmptyString
            return Sniffed(source: .appleNotificationV2, payload: .jws(text), notificationUUID: uuid, jws: jws)
        }
        let json = Payload.json(.object(object))
        if object["notification_type"] != nil { return Sniffed(source: .appleNotificationV1, payload: json) }
        if object["status"] != nil, object["receipt"] != nil || object["latest_receipt_info"] != nil {
            return Sniffed(source: .appleVerifyReceipt, payload: json)
        }
        if let message = object["message"], message["data"] != nil, object["subscription"] != nil {
            return try unwrapPush(message)
        }
        if object["packageName"] != nil, Self.rtdnMembers.contains(where: { object[$0] != nil }) {
            return Sniffed(source: .googleRTDN, payload: json)
        }
        switch object["kind"]?.string {
        case "androidpublisher#subscriptionPurchase": return Sniffed(source: .googleSubscriptionV1, payload: json)
        case "androidpublisher#subscriptionPurchaseV2": return Sniffed(source: .googleSubscriptionV2, payload: json)
        case "androidpublisher#productPurchase": return Sniffed(source: .googleProductV1, payload: json)
        case "androidpublisher#voidedPurchase": return Sniffed(source: .googleVoidedPurchase, payload: json)
        default: break
        }
        if object["voidedTimeMillis"] != nil, object["purchaseToken"] != nil {
            return Sniffed(source: .googleVoidedPurchase, payload: json)
        }
        if object["expiryTimeMillis"] != nil, object["startTimeMillis"] != nil {
            return Sniffed(source: .googleSubscriptionV1, payload: json)
        }
        if object["subscriptionState"] != nil, object["lineItems"] != nil {
            return Sniffed(source: .googleSubscriptionV2, payload: json)
        }
        if object["purchaseTimeMillis"] != nil, object["purchaseState"] != nil {
            return Sniffed(source: .googleProductV1, payload: json)
        }
        throw RecordRejection(reason: .unrecognized, detail: "no known payload shape; top-level keys: \(Self.keyList(object))")
    }

    /// A Pub/Sub push (`{"message": {"data": base64, "messageId", "publishTime", ...}, "subscription"}`): the RTDN
    /// is the base64 `data`.
    private func unwrapPush(_ message: JSON) throws(RecordRejection) -> Sniffed {
        guard let data = message["data"]?.string, let decoded = Base64URL.decode(data) else {
            throw RecordRejection(reason: .invalidPayload, detail: "Pub/Sub message.data is not base64")
        }
        let rtdn: JSON
        do {
            rtdn = try JSONParser.parse(decoded)
        } catch {
            throw RecordRejection(reason: error.quarantineReason, detail: "Pub/Sub message.data: \(error.description)")
        }
        guard rtdn.object != nil else {
            throw RecordRejection(reason: .invalidPayload, detail: "Pub/Sub message.data holds a JSON \(JSON.typeName(rtdn)), not an RTDN object")
        }
        let messageId = (message["messageId"] ?? message["message_id"])?.nonEmptyString
        let publishTime = (message["publishTime"] ?? message["publish_time"])?.string.flatMap(RFC3339.millis)
        return Sniffed(source: .googleRTDN, payload: .json(rtdn), messageId: messageId, publishedAt: publishTime)
    }

    /// A bare JWS string: an App Store V2 notification's `signedPayload`, a `signedTransactionInfo` or a
    /// `signedRenewalInfo`, told apart by their (unverified) payload. The header is not read here: one that
    /// does not decode fails verification (`bad_signature`), like any other forged header.
    private func sniffJWS(_ text: String) throws(RecordRejection) -> Sniffed {
        guard CompactJWS.looksLikeJWS(text) else {
            throw RecordRejection(reason: .unrecognized, detail: "a JSON string that is not a JWS")
        }
        guard let jws = CompactJWS(text), let payload = jws.payload.object else {
            throw RecordRejection(reason: .unrecognized, detail: "a JWS whose payload is not base64url JSON")
        }
        if payload["notificationType"] != nil {
            return Sniffed(source: .appleNotificationV2, payload: .jws(text),
                           notificationUUID: payload["notificationUUID"]?.nonEmptyString, jws: jws)
        }
        if payload["transactionId"] != nil { return Sniffed(source: .appleTransaction, payload: .jws(text), jws: jws) }
        if payload["autoRenewProductId"] != nil || payload["autoRenewStatus"] != nil {
            return Sniffed(source: .appleRenewalInfo, payload: .jws(text), jws: jws)
        }
        throw RecordRejection(reason: .unrecognized, detail: "a JWS of no known payload; payload keys: \(Self.keyList(payload))")
    }

    static func keyList(_ object: JSONObject) -> String {
        guard object.count > 0 else { return "(none)" }
        let keys = object.keys.prefix(10).joined(separator: ", ")
        return object.count > 10 ? keys + ", ..." : keys
    }
}

import Facts
import Ingest

extension SourceKind {
    /// A real-time developer notification (decoded, or the Pub/Sub push around it).
    public static let googleRTDN = SourceKind(.google, "rtdn")
    /// A `purchases.subscriptions.get` resource (`SubscriptionPurchase`).
    public static let googleSubscriptionV1 = SourceKind(.google, "subscription.v1")
    /// A `purchases.subscriptionsv2.get` resource (`SubscriptionPurchaseV2`).
    public static let googleSubscriptionV2 = SourceKind(.google, "subscription.v2")
    /// A `purchases.voidedpurchases.list` item (`VoidedPurchase`).
    public static let googleVoidedPurchase = SourceKind(.google, "voided_purchase")
    /// A `purchases.products.get` resource (`ProductPurchase`).
    public static let googleProductV1 = SourceKind(.google, "product.v1")
    /// A `purchases.productsv2.getproductpurchasev2` resource (`ProductPurchaseV2`, 2025).
    public static let googleProductV2 = SourceKind(.google, "product.v2")
}

/// Google Play's payload shapes (`inputs.md`), for records whose envelope names no `source`; member names
/// exactly as Google sends them, first match wins:
///
/// | shape | kind |
/// |---|---|
/// | `message.data` + `subscription` (Pub/Sub push) or + `ackId` (one message of a pull) | `google.rtdn`; payload = the base64-decoded RTDN object, identity its `messageId` |
/// | `data` (a string) + `messageId` or the Pub/Sub message `@type` (a bare Pub/Sub message) | the same |
/// | `receivedMessages` (a Pub/Sub pull response: several messages) | `google.rtdn`; payload = the response, each message translated |
/// | `packageName` + one of `subscriptionNotification`, `oneTimeProductNotification`, `voidedPurchaseNotification`, `pendingRefundReviewNotification`, `testNotification` | `google.rtdn` (already decoded) |
/// | `kind` = `androidpublisher#subscriptionPurchase` | `google.subscription.v1` |
/// | `kind` = `androidpublisher#subscriptionPurchaseV2` | `google.subscription.v2` |
/// | `kind` = `androidpublisher#productPurchase` | `google.product.v1` |
/// | `kind` = `androidpublisher#productPurchaseV2` | `google.product.v2` |
/// | `kind` = `androidpublisher#voidedPurchase`, or `voidedTimeMillis` + `purchaseToken`, or a list response's `voidedPurchases` | `google.voided_purchase` |
/// | `expiryTimeMillis` + `startTimeMillis` (v1 subscription without `kind`) | `google.subscription.v1` |
/// | `subscriptionState` + `lineItems` (v2 without `kind`) | `google.subscription.v2` |
/// | `purchaseTimeMillis` + `purchaseState` (product purchase without `kind`) | `google.product.v1` |
/// | `productLineItem` + `purchaseStateContext` (v2 product purchase without `kind`) | `google.product.v2` |
///
/// A Pub/Sub redelivery repeats the `messageId` and the data (``RecordIdentity/message(_:)``); its
/// `publishTime` dates a push whose envelope has no `received_at`.
public struct PlayStorePayloads: PayloadRecognizer {
    public init() {}

    public var sources: [SourceKind] {
        [.googleRTDN, .googleSubscriptionV1, .googleSubscriptionV2, .googleVoidedPurchase, .googleProductV1, .googleProductV2]
    }

    /// The `@type` of a bare Pub/Sub message as a background Cloud Function receives it.
    static let pubsubMessageType = "type.googleapis.com/google.pubsub.v1.PubsubMessage"

    static let rtdnMembers = ["subscriptionNotification", "oneTimeProductNotification", "voidedPurchaseNotification",
                              "pendingRefundReviewNotification", "testNotification"]

    public func recognize(_ value: JSON) throws(RecordRejection) -> RecognizedPayload? {
        guard case .object(let object) = value else { return nil }
        let json = Payload.json(value)
        if let message = object["message"], message["data"] != nil, object["subscription"] != nil || object["ackId"] != nil {
            return try unwrapPush(message)
        }
        if object["data"]?.string != nil,
           object["messageId"] != nil || object["message_id"] != nil || object["@type"]?.string == Self.pubsubMessageType {
            return try unwrapPush(value)
        }
        if let messages = object["receivedMessages"], messages.array != nil || messages.isNull || messages.object?.count == 0 {
            return RecognizedPayload(source: .googleRTDN, payload: json)
        }
        if object["packageName"] != nil, Self.rtdnMembers.contains(where: { object[$0] != nil }) {
            // Dated when `eventTimeMillis` reads as the translator reads it (else it falls back on `received_at`).
            let dated = object["eventTimeMillis"]?.integer != nil
            return RecognizedPayload(source: .googleRTDN, payload: json, identity: dated ? .dated : nil)
        }
        switch object["kind"]?.string {
        case "androidpublisher#subscriptionPurchase": return RecognizedPayload(source: .googleSubscriptionV1, payload: json)
        case "androidpublisher#subscriptionPurchaseV2": return RecognizedPayload(source: .googleSubscriptionV2, payload: json)
        case "androidpublisher#productPurchase": return RecognizedPayload(source: .googleProductV1, payload: json)
        case "androidpublisher#productPurchaseV2": return RecognizedPayload(source: .googleProductV2, payload: json)
        case "androidpublisher#voidedPurchase": return RecognizedPayload(source: .googleVoidedPurchase, payload: json)
        default: break
        }
        if object["voidedTimeMillis"] != nil && object["purchaseToken"] != nil || object["voidedPurchases"] != nil {
            return RecognizedPayload(source: .googleVoidedPurchase, payload: json)
        }
        if object["expiryTimeMillis"] != nil, object["startTimeMillis"] != nil {
            return RecognizedPayload(source: .googleSubscriptionV1, payload: json)
        }
        if object["subscriptionState"] != nil, object["lineItems"] != nil {
            return RecognizedPayload(source: .googleSubscriptionV2, payload: json)
        }
        if object["purchaseTimeMillis"] != nil, object["purchaseState"] != nil {
            return RecognizedPayload(source: .googleProductV1, payload: json)
        }
        if object["productLineItem"] != nil, object["purchaseStateContext"] != nil {
            return RecognizedPayload(source: .googleProductV2, payload: json)
        }
        return nil
    }

    /// A Pub/Sub message (`{"data": base64, "messageId", "publishTime", ...}`, as a push's or a pull's `message`,
    /// or bare): the RTDN is the base64 `data`.
    private func unwrapPush(_ message: JSON) throws(RecordRejection) -> RecognizedPayload {
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
        // Either spelling; a `null` in one does not hide the other.
        let messageId = message["messageId"]?.nonEmptyString ?? message["message_id"]?.nonEmptyString
        let publishTime = (message["publishTime"]?.string ?? message["publish_time"]?.string).flatMap(RFC3339.millis)
        // Without an id, the RTDN it carries is keyed as it would be alone: dated by its own event time.
        let identity = messageId.map(RecordIdentity.message) ?? (rtdn["eventTimeMillis"]?.integer != nil ? .dated : nil)
        return RecognizedPayload(source: .googleRTDN, payload: .json(rtdn), identity: identity, publishedAt: publishTime)
    }
}

import Facts
import Ingest

extension SourceKind {
    /// A `verifyReceipt` response.
    public static let appleVerifyReceipt = SourceKind(.apple, "verify_receipt")
    /// An App Store Server Notification V1.
    public static let appleNotificationV1 = SourceKind(.apple, "notification.v1")
    /// An App Store Server Notification V2: `{"signedPayload": JWS}`, or the JWS alone.
    public static let appleNotificationV2 = SourceKind(.apple, "notification.v2")
    /// A `JWSTransaction` on its own.
    public static let appleTransaction = SourceKind(.apple, "transaction")
    /// A `JWSRenewalInfo` on its own.
    public static let appleRenewalInfo = SourceKind(.apple, "renewal_info")
    /// An App Store Server API Get Transaction History response (`HistoryResponse`).
    public static let appleTransactionHistory = SourceKind(.apple, "transaction_history")
    /// An App Store Server API Get All Subscription Statuses response (`StatusResponse`).
    public static let appleSubscriptionStatuses = SourceKind(.apple, "subscription_statuses")
}

/// The App Store's payload shapes (`inputs.md`), for records whose envelope names no `source`; member names
/// exactly as Apple sends them, first match wins:
///
/// | shape | kind |
/// |---|---|
/// | `signedPayload` (a JWS) | `apple.notification.v2`; payload = `.jws(signedPayload)`, identity its `notificationUUID` |
/// | `notification_type` | `apple.notification.v1` |
/// | `status` + (`receipt` or `latest_receipt_info`) | `apple.verify_receipt` |
/// | `notificationHistory` (a Get Notification History page) | `apple.notification.v2`; each `signedPayload` read |
/// | `signedTransactions` | `apple.transaction_history` |
/// | `data` whose elements hold `lastTransactions`, or `data` + `bundleId` + `environment` | `apple.subscription_statuses` |
/// | a JWS string whose payload has `notificationType` | `apple.notification.v2`; payload = `.jws(text)` |
/// | a JWS string whose payload has `transactionId` | `apple.transaction`; payload = `.jws(text)` |
/// | a JWS string whose payload has `autoRenewProductId` or `autoRenewStatus` (and no `transactionId`) | `apple.renewal_info` |
///
/// JWS payloads are decoded here **unverified**, only to recognise them and to read `notificationUUID` (Apple
/// resends a notification with the same UUID: ``RecordIdentity/unique(_:)``); ``AppStoreTranslator`` verifies
/// every JWS before any fact is taken from it.
public struct AppStorePayloads: PayloadRecognizer {
    public init() {}

    public var sources: [SourceKind] {
        [.appleVerifyReceipt, .appleNotificationV1, .appleNotificationV2, .appleTransaction, .appleRenewalInfo,
         .appleTransactionHistory, .appleSubscriptionStatuses]
    }

    public func recognize(_ value: JSON) throws(RecordRejection) -> RecognizedPayload? {
        switch value {
        case .string(let text): return recognizeJWS(text)
        case .object(let object): return try recognize(object)
        default: return nil
        }
    }

    private func recognize(_ object: JSONObject) throws(RecordRejection) -> RecognizedPayload? {
        if let signed = object["signedPayload"] {
            guard case .string(let text) = signed, !text.isEmpty else {
                throw RecordRejection(reason: .invalidPayload, detail: "signedPayload is not a string")
            }
            let jws = CompactJWS(text)
            return RecognizedPayload(source: .appleNotificationV2, payload: .jws(text),
                                     identity: jws?.payload["notificationUUID"]?.nonEmptyString.map(RecordIdentity.unique),
                                     jws: jws)
        }
        let json = Payload.json(.object(object))
        if object["notification_type"] != nil { return RecognizedPayload(source: .appleNotificationV1, payload: json) }
        if object["status"] != nil, object["receipt"] != nil || object["latest_receipt_info"] != nil {
            // A response dated by Apple (`receipt.request_date_ms`, read as the translator reads it) states the
            // same whenever it was logged.
            let dated = object["receipt"].flatMap { AppleDate.millis($0, "request_date") } != nil
            return RecognizedPayload(source: .appleVerifyReceipt, payload: json, identity: dated ? .dated : nil)
        }
        // Server API responses: their facts are dated by the signed payloads they list. Get Transaction Info
        // (`TransactionInfoResponse`) holds one signed transaction: read as that transaction.
        if case .string(let text)? = object["signedTransactionInfo"], object["data"] == nil, object["signedRenewalInfo"] == nil,
           let transaction = recognizeJWS(text), transaction.source == .appleTransaction {
            return transaction
        }
        // A Get Notification History page: the notifications it lists date themselves.
        if object["notificationHistory"] != nil {
            return RecognizedPayload(source: .appleNotificationV2, payload: json, identity: .dated)
        }
        if object["signedTransactions"] != nil {
            return RecognizedPayload(source: .appleTransactionHistory, payload: json, identity: .dated)
        }
        if let data = object["data"], Self.isStatusList(data, beside: object) {
            return RecognizedPayload(source: .appleSubscriptionStatuses, payload: json, identity: .dated)
        }
        return nil
    }

    /// A `StatusResponse.data`: an array of `SubscriptionGroupIdentifierItem`s (`lastTransactions`), or, when
    /// empty or odd, a `data` beside the response's `bundleId` and `environment`.
    private static func isStatusList(_ data: JSON, beside object: JSONObject) -> Bool {
        if case .array(let items) = data, items.contains(where: { $0["lastTransactions"] != nil }) { return true }
        return object["bundleId"] != nil && object["environment"] != nil
    }

    /// A bare JWS string: a notification's `signedPayload`, a `signedTransactionInfo` or a `signedRenewalInfo`,
    /// told apart by their (unverified) payload. The header is not read here: one that does not decode fails
    /// verification (`bad_signature`), like any other forged header.
    private func recognizeJWS(_ text: String) -> RecognizedPayload? {
        guard CompactJWS.looksLikeJWS(text), let jws = CompactJWS(text), let payload = jws.payload.object else {
            return nil
        }
        if payload["notificationType"] != nil {
            return RecognizedPayload(source: .appleNotificationV2, payload: .jws(text),
                                     identity: payload["notificationUUID"]?.nonEmptyString.map(RecordIdentity.unique),
                                     jws: jws)
        }
        // A signed transaction or renewal info is dated by its `signedDate`.
        let dated: RecordIdentity? = payload["signedDate"]?.int64 == nil ? nil : .dated
        if payload["transactionId"] != nil {
            return RecognizedPayload(source: .appleTransaction, payload: .jws(text), identity: dated, jws: jws)
        }
        if payload["autoRenewProductId"] != nil || payload["autoRenewStatus"] != nil {
            return RecognizedPayload(source: .appleRenewalInfo, payload: .jws(text), identity: dated, jws: jws)
        }
        return nil
    }
}

import Foundation
@testable import Ingest

/// Realistic store payloads, field names and value types exactly as Apple and Google send them.
enum StorePayloads {
    /// A compact JWS as the App Store signs it (ES256 with an `x5c` chain); the signature is not valid, which
    /// does not matter here: ingest never verifies, it only recognises.
    static func jws(_ payload: String) -> String {
        let header = #"{"alg":"ES256","x5c":["MIIEMDCCA7agAwIBAgIQaPoPldvpSoEH0lBrjDPv9jAKBggqhkjOPQQDAzB1","MIIDFjCCApygAwIBAgIUIsGhRwp0c2nvU4YSycafPTjzbNcwCgYIKoZIzj0EAwMw","MIICQzCCAcmgAwIBAgIILcX8iNLFS5UwCgYIKoZIzj0EAwMwZzEbMBkGA1UEAwwS"]}"#
        let signature = (0..<64).map { UInt8($0 * 7 % 256) }
        return Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8)) + "." + Base64URL.encode(signature)
    }

    static let transactionInfo = #"{"transactionId":"2000000512345678","originalTransactionId":"2000000500000000","webOrderLineItemId":"2000000045678901","bundleId":"com.example.app","productId":"premium_monthly","subscriptionGroupIdentifier":"21345678","purchaseDate":1709294400000,"originalPurchaseDate":1706702400000,"expiresDate":1711972800000,"quantity":1,"type":"Auto-Renewable Subscription","inAppOwnershipType":"PURCHASED","signedDate":1709294405000,"environment":"Production","transactionReason":"RENEWAL","storefront":"USA","storefrontId":"143441","price":9990,"currency":"USD"}"#

    static let renewalInfo = #"{"originalTransactionId":"2000000500000000","autoRenewProductId":"premium_monthly","productId":"premium_monthly","autoRenewStatus":1,"isInBillingRetryPeriod":false,"signedDate":1709294405000,"environment":"Production","recentSubscriptionStartDate":1706702400000,"renewalDate":1711972800000}"#

    static let notificationUUID = "002e14d5-51f5-4503-b5a8-c3a1af68eb20"

    static var notificationV2Payload: String {
        #"{"notificationType":"DID_RENEW","subtype":"BILLING_RECOVERY","notificationUUID":"\#(notificationUUID)","data":{"appAppleId":1234567890,"bundleId":"com.example.app","bundleVersion":"42","environment":"Production","signedTransactionInfo":"\#(jws(transactionInfo))","signedRenewalInfo":"\#(jws(renewalInfo))","status":1},"version":"2.0","signedDate":1709294406000}"#
    }

    static var signedPayload: String { jws(notificationV2Payload) }

    static var notificationV2: String { #"{"signedPayload":"\#(signedPayload)"}"# }

    static let notificationV1 = #"{"notification_type":"DID_CHANGE_RENEWAL_STATUS","password":"","environment":"PROD","auto_renew_status":"false","auto_renew_status_change_date_ms":"1709294400000","auto_renew_product_id":"premium_monthly","bid":"com.example.app","bvrs":"42","unified_receipt":{"status":0,"environment":"Production","latest_receipt":"MIITtgYJKoZIhvcNAQcCoIITpzCCE6M=","latest_receipt_info":[{"transaction_id":"1000000812345678","original_transaction_id":"1000000800000000","product_id":"premium_monthly","purchase_date_ms":"1709294400000","expires_date_ms":"1711972800000","is_trial_period":"false","is_in_intro_offer_period":"false","in_app_ownership_type":"PURCHASED"}],"pending_renewal_info":[{"auto_renew_product_id":"premium_monthly","original_transaction_id":"1000000800000000","product_id":"premium_monthly","auto_renew_status":"0"}]}}"#

    static let verifyReceipt = #"{"status":0,"environment":"Production","receipt":{"receipt_type":"Production","bundle_id":"com.example.app","application_version":"42","in_app":[{"quantity":"1","product_id":"coins_100","transaction_id":"1000000811111111","original_transaction_id":"1000000811111111","purchase_date_ms":"1704067200000","is_trial_period":"false","cancellation_date":"0"},{"quantity":"1","product_id":"premium_monthly","transaction_id":"1000000812345678","original_transaction_id":"1000000800000000","purchase_date_ms":"1709294400000","expires_date_ms":"1711972800000","is_trial_period":"false"}]},"latest_receipt_info":[{"quantity":"1","product_id":"premium_monthly","transaction_id":"1000000812345678","original_transaction_id":"1000000800000000","purchase_date_ms":"1709294400000","expires_date_ms":"1711972800000","is_trial_period":"false","is_upgraded":"false"}],"pending_renewal_info":[{"auto_renew_product_id":"premium_monthly","original_transaction_id":"1000000800000000","product_id":"premium_monthly","auto_renew_status":"1"}],"latest_receipt":"MIITtgYJKoZIhvcNAQcCoIITpzCCE6M="}"#

    static let purchaseToken = "opaque-token-up-to-150-characters.AO-J1OxBc4xyzPq8"

    static var rtdn: String {
        #"{"version":"1.0","packageName":"com.example.app","eventTimeMillis":"1709294400123","subscriptionNotification":{"version":"1.0","notificationType":4,"purchaseToken":"\#(purchaseToken)","subscriptionId":"premium_monthly"}}"#
    }

    static let voidedRTDN = #"{"version":"1.0","packageName":"com.example.app","eventTimeMillis":1709294400123,"voidedPurchaseNotification":{"purchaseToken":"tok-v","orderId":"GPA.3371-1234-5678-90123","productType":1,"refundType":1}}"#
    static let oneTimeRTDN = #"{"version":"1.0","packageName":"com.example.app","eventTimeMillis":"1709294400123","oneTimeProductNotification":{"version":"1.0","notificationType":1,"purchaseToken":"tok-o","sku":"coins_100"}}"#
    static let testRTDN = #"{"version":"1.0","packageName":"com.example.app","eventTimeMillis":"1709294400123","testNotification":{"version":"1.0"}}"#

    static let pubSubMessageId = "10534892571534917"

    static var pubSubPush: String {
        let data = Data(rtdn.utf8).base64EncodedString()
        return #"{"message":{"attributes":{},"data":"\#(data)","messageId":"\#(pubSubMessageId)","message_id":"\#(pubSubMessageId)","publishTime":"2024-03-01T12:00:01.456Z","publish_time":"2024-03-01T12:00:01.456Z"},"subscription":"projects/example-project/subscriptions/play-rtdn-push"}"#
    }

    static let subscriptionV1 = #"{"kind":"androidpublisher#subscriptionPurchase","startTimeMillis":"1709294400000","expiryTimeMillis":"1711972800000","autoRenewing":true,"priceCurrencyCode":"USD","priceAmountMicros":"9990000","countryCode":"US","developerPayload":"","paymentState":1,"orderId":"GPA.3372-8841-2214-50781..0","purchaseType":0,"acknowledgementState":1}"#
    static let subscriptionV1WithoutKind = #"{"startTimeMillis":"1709294400000","expiryTimeMillis":"1711972800000","autoRenewing":false,"priceCurrencyCode":"EUR","priceAmountMicros":"8990000","paymentState":1,"cancelReason":0,"userCancellationTimeMillis":"1710000000000","orderId":"GPA.3372-8841-2214-50781..1"}"#
    static let subscriptionV2 = #"{"kind":"androidpublisher#subscriptionPurchaseV2","startTime":"2024-03-01T12:00:00.000Z","regionCode":"US","subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","latestOrderId":"GPA.3372-8841-2214-50781","acknowledgementState":"ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED","lineItems":[{"productId":"premium_monthly","expiryTime":"2024-04-01T12:00:00.000Z","autoRenewingPlan":{"autoRenewEnabled":true},"offerDetails":{"basePlanId":"monthly","offerTags":[]}}]}"#
    static let subscriptionV2WithoutKind = #"{"startTime":"2024-03-01T12:00:00Z","subscriptionState":"SUBSCRIPTION_STATE_IN_GRACE_PERIOD","linkedPurchaseToken":"older-token","lineItems":[{"productId":"premium_yearly","expiryTime":"2025-03-01T12:00:00Z"}],"testPurchase":{}}"#
    static let productV1 = #"{"kind":"androidpublisher#productPurchase","purchaseTimeMillis":"1709294400000","purchaseState":0,"consumptionState":1,"developerPayload":"","orderId":"GPA.3333-4444-5555-66666","purchaseType":0,"acknowledgementState":1,"regionCode":"US"}"#
    static let productV1WithoutKind = #"{"purchaseTimeMillis":"1709294400000","purchaseState":0,"consumptionState":0,"orderId":"GPA.3333-4444-5555-77777","regionCode":"DE"}"#
    static let voidedPurchase = #"{"kind":"androidpublisher#voidedPurchase","purchaseToken":"tok-v","purchaseTimeMillis":"1709294400000","voidedTimeMillis":"1709900000000","orderId":"GPA.3371-1234-5678-90123","voidedSource":0,"voidedReason":7,"voidedQuantity":1}"#
    static let voidedPurchaseWithoutKind = #"{"purchaseToken":"tok-w","purchaseTimeMillis":"1709294400000","voidedTimeMillis":"1709900000000","orderId":"GPA.3371-1234-5678-90124..2","voidedSource":1,"voidedReason":0}"#
    /// A whole `purchases.voidedpurchases.list` response, as a backfill saves each page.
    static let voidedPurchasesList = #"{"tokenPagination":{"nextPageToken":"CgwI"},"voidedPurchases":[{"kind":"androidpublisher#voidedPurchase","purchaseToken":"tok-l","purchaseTimeMillis":"1709294400000","voidedTimeMillis":"1709900000000","orderId":"GPA.3371-1234-5678-90125","voidedSource":0,"voidedReason":1,"refundType":1}]}"#
}

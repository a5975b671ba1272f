import AppStore
import Facts
import Foundation
import Pipeline
import PlayStore

/// Realistic input records for the ingest end-to-end tests, as backends log them: Google Play subscription
/// resources in envelopes, Pub/Sub pushes of RTDNs, and App Store sandbox receipts (excluded).
enum IngestFixtures {
    static let march2024: Int64 = 1_709_294_400_000
    static let day: Int64 = 86_400_000

    /// The plausible times of a run whose clock reads 2026-01-01T00:00:00Z: fixed, so that tests never depend on today.
    static let times = PlausibleTimes(now: 1_767_225_600_000)

    /// The translator the CLI builds: both real store translators, dispatching on the platform.
    static func translator() throws -> RecordTranslator {
        let apple = try AppStoreTranslator(trustedRoots: AppStoreTranslator.appleRootCAG3, bundleIds: [], times: times)
        return RecordTranslator(stores: [apple, PlayStoreTranslator(packageNames: ["com.example.app"], times: times)])
    }

    /// `purchases.subscriptions.get` (v1) for token `n`, renewal `renewal`, logged with its context.
    static func subscription(_ n: Int, renewal: Int = 0) -> String {
        let start = march2024 + Int64(n % 1000) * 60_000 + Int64(renewal) * 30 * day
        let order = renewal == 0 ? "GPA.3372-\(1000 + n % 9000)-\(n)" : "GPA.3372-\(1000 + n % 9000)-\(n)..\(renewal - 1)"
        return #"{"received_at":\#(start + 4_000),"source":"google.subscription.v1","package_name":"com.example.app","#
            + #""subscription_id":"premium_monthly","purchase_token":"tok-\#(n)","app_user_id":"user-\#(n)","#
            + #""body":{"kind":"androidpublisher#subscriptionPurchase","startTimeMillis":"\#(start)","#
            + #""expiryTimeMillis":"\#(start + 30 * day)","autoRenewing":true,"priceCurrencyCode":"EUR","#
            + #""priceAmountMicros":"4990000","countryCode":"DE","paymentState":1,"orderId":"\#(order)","#
            + #""acknowledgementState":1}}"#
    }

    /// A Pub/Sub push of an RTDN (`SUBSCRIPTION_RENEWED`, 2) for token `n`; deduplicated on `messageId`.
    static func notification(_ n: Int, renewal: Int = 1) -> String {
        let event = march2024 + Int64(n % 1000) * 60_000 + Int64(renewal) * 30 * day
        let data = #"{"version":"1.0","packageName":"com.example.app","eventTimeMillis":"\#(event)","#
            + #""subscriptionNotification":{"version":"1.0","notificationType":2,"purchaseToken":"tok-\#(n)","#
            + #""subscriptionId":"premium_monthly"}}"#
        let encoded = Data(data.utf8).base64EncodedString()
        return #"{"message":{"data":"\#(encoded)","messageId":"\#(7_000_000 + n * 10 + renewal)","#
            + #""publishTime":"2024-03-01T12:00:00.123Z"},"subscription":"projects/example/subscriptions/play-rtdn"}"#
    }

    /// A verifyReceipt response from the sandbox: excluded (`sandbox`).
    static func sandboxReceipt(_ n: Int) -> String {
        let start = march2024 + Int64(n) * 60_000
        return #"{"status":0,"environment":"Sandbox","receipt":{"receipt_type":"ProductionSandbox","bundle_id":"com.example.app","#
            + #""in_app":[]},"latest_receipt_info":[{"quantity":"1","product_id":"premium_monthly","#
            + #""transaction_id":"20000000\#(10_000_000 + n)","original_transaction_id":"20000000\#(10_000_000 + n)","#
            + #""purchase_date_ms":"\#(start)","expires_date_ms":"\#(start + 30 * day)","in_app_ownership_type":"PURCHASED"}]}"#
    }

    /// A mixed batch of lines for tokens in `range`: resource, renewal notification, and every tenth a sandbox
    /// receipt; one garbage line per 1000 records (quarantined as malformed JSON).
    static func lines(_ range: Range<Int>) -> [String] {
        var lines: [String] = []
        for n in range {
            lines.append(subscription(n))
            lines.append(notification(n))
            if n % 10 == 0 { lines.append(sandboxReceipt(n)) }
            if n % 1000 == 999 { lines.append("{\"received_at\": \"2024-03-01T12:00:00Z\", \"body\": {\"cut") }
        }
        return lines
    }

    static func write(_ lines: [String], to path: String) throws {
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: path))
    }

    static func append(_ lines: [String], to path: String) throws {
        guard let handle = FileHandle(forWritingAtPath: path) else { throw CocoaError(.fileNoSuchFile) }
        defer { try? handle.close() }
        handle.seekToEndOfFile()
        handle.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    }
}

/// A fresh directory per test, removed when released.
final class TemporaryDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "ingest-e2e-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

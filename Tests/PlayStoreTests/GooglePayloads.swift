import Facts
import Ingest
@testable import PlayStore

/// ms UTC of an RFC 3339 time; -1 for a malformed literal (which then fails the test's expectations).
func ms(_ text: String) -> Millis { RFC3339.millis(text) ?? -1 }

let package = "com.example.app"

/// The plausible times of a run whose clock reads 2026-01-01T00:00:00Z: fixed, so that tests never depend on today.
let testTimes = PlausibleTimes(now: 1_767_225_600_000)

/// A record as Ingest hands it over: a Google payload with the envelope context a backend logs.
func record(_ source: SourceKind, _ json: String, receivedAt: Millis? = nil, token: String? = nil,
            product: String? = nil, packageName: String? = package, appUser: String? = nil,
            orderId: String? = nil, currency: String? = nil) throws -> ParsedRecord {
    ParsedRecord(provenance: Provenance(file: "google.ndjson", position: 1), source: source,
                 envelope: Envelope(receivedAt: receivedAt, appUserId: appUser, packageName: packageName,
                                    productId: product, purchaseToken: token, orderId: orderId, currency: currency),
                 payload: .json(try JSONParser.parse(json)), dedupKey: "test")
}

func usedFacts(_ translation: Translation) -> [Fact] {
    if case .used(let facts, _) = translation { return facts }
    return []
}

/// The parts a used record set aside.
func quarantinedParts(_ translation: Translation) -> [QuarantinedPart] {
    if case .used(_, let parts) = translation { return parts }
    return []
}

/// A decoded RTDN as Pub/Sub delivers it, `eventTimeMillis` as a string (as Google sends it) or a number.
func rtdnJSON(token: String, product: String, type: Int, at: Millis, numeric: Bool = false) -> String {
    let time = numeric ? "\(at)" : "\"\(at)\""
    return """
    {"version":"1.0","packageName":"\(package)","eventTimeMillis":\(time),\
    "subscriptionNotification":{"version":"1.0","notificationType":\(type),"purchaseToken":"\(token)","subscriptionId":"\(product)"}}
    """
}

/// A `purchases.subscriptions.get` body: int64 fields as strings, as the API returns them.
func v1JSON(start: Millis, expiry: Millis, orderId: String, paymentState: Int?, autoRenewing: Bool,
            cancelReason: Int? = nil, userCancellation: Millis? = nil, autoResume: Millis? = nil,
            linked: String? = nil, priceMicros: String = "4990000", currency: String = "USD",
            purchaseType: Int? = nil, accountId: String? = nil) -> String {
    var members = [
        "\"kind\":\"androidpublisher#subscriptionPurchase\"",
        "\"startTimeMillis\":\"\(start)\"",
        "\"expiryTimeMillis\":\"\(expiry)\"",
        "\"autoRenewing\":\(autoRenewing)",
        "\"priceCurrencyCode\":\"\(currency)\"",
        "\"priceAmountMicros\":\"\(priceMicros)\"",
        "\"countryCode\":\"US\"",
        "\"developerPayload\":\"\"",
        "\"orderId\":\"\(orderId)\"",
        "\"acknowledgementState\":1",
    ]
    if let paymentState { members.append("\"paymentState\":\(paymentState)") }
    if let cancelReason { members.append("\"cancelReason\":\(cancelReason)") }
    if let userCancellation { members.append("\"userCancellationTimeMillis\":\"\(userCancellation)\"") }
    if let autoResume { members.append("\"autoResumeTimeMillis\":\"\(autoResume)\"") }
    if let linked { members.append("\"linkedPurchaseToken\":\"\(linked)\"") }
    if let purchaseType { members.append("\"purchaseType\":\(purchaseType)") }
    if let accountId { members.append("\"obfuscatedExternalAccountId\":\"\(accountId)\"") }
    return "{" + members.joined(separator: ",") + "}"
}

/// A `purchases.subscriptionsv2.get` body.
func v2JSON(state: String, start: String, expiry: String, latestOrderId: String, product: String = "premium_monthly",
            autoRenew: Bool = true, units: String = "4", nanos: Int = 990_000_000, currency: String = "USD",
            offerPhase: String = "\"basePrice\":{}", extra: String = "") -> String {
    """
    {"kind":"androidpublisher#subscriptionPurchaseV2","regionCode":"US","startTime":"\(start)",\
    "subscriptionState":"\(state)","latestOrderId":"\(latestOrderId)","acknowledgementState":"ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED",\
    \(extra)"lineItems":[{"productId":"\(product)","expiryTime":"\(expiry)",\
    "autoRenewingPlan":{"autoRenewEnabled":\(autoRenew),"recurringPrice":{"currencyCode":"\(currency)","units":"\(units)","nanos":\(nanos)}},\
    "offerDetails":{"basePlanId":"monthly","offerTags":[]},"offerPhase":{\(offerPhase)},"latestSuccessfulOrderId":"\(latestOrderId)"}]}
    """
}

/// Collects the facts a sequence of Google records states, as the ledger would (a set).
struct Archive {
    let translator = PlayStoreTranslator(packageNames: [package], times: testTimes)
    var facts: [Fact] = []
    var failures: [Translation] = []

    mutating func add(_ record: ParsedRecord) {
        let translation = translator.translate(record)
        if case .used(let stated, _) = translation {
            for fact in stated where !facts.contains(fact) { facts.append(fact) }
        } else {
            failures.append(translation)
        }
    }

    /// The RTDN of an event, as logged at its event time.
    mutating func rtdn(_ token: String, _ product: String, _ type: Int, at: Millis) throws {
        add(try record(.googleRTDN, rtdnJSON(token: token, product: product, type: type, at: at), receivedAt: at))
    }

    /// The RTDNs of one token, each a `notificationType` and its event time, in order.
    mutating func rtdns(_ token: String, _ product: String, _ notices: [(type: Int, at: Millis)]) throws {
        for notice in notices { try rtdn(token, product, notice.type, at: notice.at) }
    }

    /// A v1 resource fetched five seconds after `at`.
    mutating func v1(_ token: String, _ product: String, at: Millis, _ json: String) throws {
        add(try record(.googleSubscriptionV1, json, receivedAt: at + 5_000, token: token, product: product))
    }

    /// A v2 resource fetched five seconds after `at`.
    mutating func v2(_ token: String, _ product: String, at: Millis, _ json: String) throws {
        add(try record(.googleSubscriptionV2, json, receivedAt: at + 5_000, token: token, product: product))
    }
}

/// A deterministic shuffle (SplitMix64), so a failure reproduces.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension Archive {
    /// A `purchases.products.get` resource of `quantity` units bought at `at`, logged then.
    mutating func product(_ token: String, _ product: String, order: String, quantity: Int, at: Millis) throws {
        add(try record(.googleProductV1, """
            {"purchaseTimeMillis":"\(at)","purchaseState":0,"orderId":"\(order)","quantity":\(quantity)}
            """, receivedAt: at, token: token, product: product))
    }

    /// The voided-purchase RTDN of a one-time product's order (`refundType` 1 full, 2 quantity-based partial).
    mutating func voidedRTDN(_ token: String, order: String, refundType: Int, at: Millis) throws {
        add(try record(.googleRTDN, """
            {"version":"1.0","packageName":"\(package)","eventTimeMillis":"\(at)",\
            "voidedPurchaseNotification":{"purchaseToken":"\(token)","orderId":"\(order)","productType":2,"refundType":\(refundType)}}
            """, receivedAt: at))
    }
}

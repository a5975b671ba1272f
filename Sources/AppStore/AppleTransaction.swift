import Facts
import Ingest

/// One App Store transaction, whichever payload carried it: a receipt entry of a `verifyReceipt` response or a
/// V1 notification (`receipt.in_app[]`, `latest_receipt_info[]`: snake_case, numbers and booleans as strings,
/// dates as `*_ms` or `*_date`), or a signed transaction (`JWSTransactionDecodedPayload` of a V2 notification, a
/// bare JWS or an App Store Server API response: camelCase, epoch-ms numbers). Each spelling is read once into
/// this value; the facts are written by one function, ``facts(into:envelope:revocation:)``, for every payload.
struct AppleTransaction {
    var transactionId: String
    var originalTransactionId: String
    var productId: String
    /// Purchase (or renewal) time, ms UTC; for a restore, the time of the restore.
    var purchased: Millis
    /// `original_purchase_date` / `originalPurchaseDate`, ms UTC: read for a restored one-time product only.
    var originalPurchased: Millis?
    /// The period's end, ms UTC; `nil` for a consumable or non-consumable, which has none (receipts mix them
    /// into the same arrays as subscriptions).
    var expires: Millis?
    /// Refund or revocation time (`cancellation_date` / `revocationDate`), ms UTC.
    var revoked: Millis?
    /// Share refunded, in thousandths of a percent (`revocationPercentage`; receipts: the whole, 100000).
    var revocationPercentage: Int64 = 100_000
    /// Ended by an upgrade: its cancellation is not a refund (`is_upgraded` / `isUpgraded`).
    var upgraded = false
    var trial = false
    /// Bought under a paid offer: introductory (`is_in_intro_offer_period`), a receipt's promotional offer or offer
    /// code (`promotional_offer_id`, `offer_code_ref_name`), or any `offerType` of a signed transaction (1
    /// introductory, 2 promotional, 3 offer code, 4 win-back, and those to come) that is not a free trial.
    var introductory = false
    /// An offer (`offerType` 1 to 3) of a signed transaction without `offerDiscountType` (signed before late 2023).
    var offerKindUnstated = false
    var webOrderLineItemId: String?
    /// Price in micro-units of ``currency`` (signed payloads: `price` milliunits × 1000); receipts carry none.
    var priceMicros: Int64?
    /// ISO 4217, as the payload states it; receipts carry none.
    var currency: String?
    /// Units of a consumable bought in this transaction (`quantity`; 1 when absent), read for one-time products
    /// only (a subscription's is always 1). A signed transaction's ``priceMicros`` is already the price of all.
    var quantity: Int64 = 1
    /// `appAccountToken` of a signed payload.
    var appAccountToken: String?

    /// The subject of its facts: the subscription, or the one-time purchase (`original_transaction_id`).
    var subject: String { originalTransactionId }

    /// A one-time product restored on another device is re-issued under a new `transaction_id` and dated at the
    /// restore; it is the purchase its `original_transaction_id` names, made at its original purchase date.
    /// (A restored subscription transaction keeps its dates; the history builder merges it by its
    /// `web_order_line_item_id`.)
    private var isRestoredOneTime: Bool { expires == nil && transactionId != originalTransactionId }

    /// The transaction the facts name: the original purchase for a restored one-time product, else this one.
    var purchaseId: String { isRestoredOneTime ? originalTransactionId : transactionId }

    /// A receipt entry at `path` (`latest_receipt_info[3]`).
    init(receiptEntry value: JSON, path: String, times: PlausibleTimes) throws(Rejection) {
        guard value.object != nil else {
            throw .invalid("\(path) is a JSON \(JSON.typeName(value)), not a receipt entry")
        }
        guard let transactionId = value["transaction_id"]?.nonEmptyString else {
            throw .invalid("\(path).transaction_id is missing")
        }
        guard let productId = value["product_id"]?.nonEmptyString else {
            throw .invalid("\(path).product_id of transaction \(transactionId) is missing")
        }
        guard let purchased = try AppleDate.time(value, "purchase_date", path: path, times: times) else {
            throw .invalid("\(path).purchase_date of transaction \(transactionId) is missing or unreadable")
        }
        self.transactionId = transactionId
        self.originalTransactionId = value["original_transaction_id"]?.nonEmptyString ?? transactionId
        self.productId = productId
        self.purchased = purchased
        if AppleDate.has(value, "expires_date") {
            guard let expires = try AppleDate.time(value, "expires_date", path: path, times: times) else {
                throw .invalid("\(path).expires_date of transaction \(transactionId) is unreadable")
            }
            self.expires = expires
        }
        if isRestoredOneTime {
            originalPurchased = try AppleDate.time(value, "original_purchase_date", path: path, times: times)
        }
        revoked = try AppleDate.time(value, "cancellation_date", path: path, times: times)
        upgraded = value["is_upgraded"]?.bool == true
        trial = value["is_trial_period"]?.bool == true
        // A paid offer: introductory, or a promotional offer or offer code (which receipts name, and price nowhere).
        introductory = !trial && (value["is_in_intro_offer_period"]?.bool == true
            || value["promotional_offer_id"]?.nonEmptyString != nil || value["offer_code_ref_name"]?.nonEmptyString != nil)
        webOrderLineItemId = value["web_order_line_item_id"]?.nonEmptyString
        if expires == nil { quantity = try Self.quantity(value["quantity"], path: path, transactionId: transactionId) }
        try checkTimes()
    }

    /// A signed transaction's payload at `path` (`data.signedTransactionInfo`, `signedTransactions[2]`; `""` for
    /// a bare one).
    init(signed t: JSON, path: String, times: PlausibleTimes) throws(Rejection) {
        guard let transactionId = t["transactionId"]?.nonEmptyString else { throw .invalid("transaction without transactionId") }
        guard let productId = t["productId"]?.nonEmptyString else {
            throw .invalid("transaction \(transactionId) without productId")
        }
        guard let purchased = try AppleDate.signedTime(t, "purchaseDate", path: path, times: times) else {
            throw .invalid("transaction \(transactionId) without numeric purchaseDate")
        }
        self.transactionId = transactionId
        self.originalTransactionId = t["originalTransactionId"]?.nonEmptyString ?? transactionId
        self.productId = productId
        self.purchased = purchased
        if let milliunits = t["price"]?.int64 {
            let (micros, overflow) = milliunits.multipliedReportingOverflow(by: 1000)
            guard !overflow, (0...Fact.largestAmountMicros).contains(micros) else {
                throw .invalid("transaction \(transactionId) has an out-of-range price: \(milliunits)")
            }
            priceMicros = micros
        }
        if let expiresValue = t["expiresDate"], !expiresValue.isNull {
            guard let expires = try AppleDate.signedTime(t, "expiresDate", path: path, times: times) else {
                throw .invalid("transaction \(transactionId) has a non-numeric expiresDate")
            }
            self.expires = expires
        }
        if isRestoredOneTime {
            originalPurchased = try AppleDate.signedTime(t, "originalPurchaseDate", path: path, times: times)
        }
        currency = t["currency"]?.nonEmptyString
        revoked = try AppleDate.signedTime(t, "revocationDate", path: path, times: times)
        revocationPercentage = t["revocationPercentage"]?.int64 ?? 100_000
        guard (0...100_000).contains(revocationPercentage) else {
            throw .invalid("transaction \(transactionId) has revocationPercentage \(revocationPercentage), outside 0...100000")
        }
        upgraded = t["isUpgraded"]?.bool == true
        trial = t["offerDiscountType"]?.string == "FREE_TRIAL"
        introductory = !trial && (t["offerType"]?.int64 ?? 0) >= 1
        offerKindUnstated = !trial && (1...3).contains(t["offerType"]?.int64 ?? 0) && (t["offerDiscountType"]?.isNull ?? true)
        webOrderLineItemId = t["webOrderLineItemId"]?.nonEmptyString
        appAccountToken = t["appAccountToken"]?.nonEmptyString
        if expires == nil { quantity = try Self.quantity(t["quantity"], path: path, transactionId: transactionId) }
        try checkTimes()
    }

    /// Rejects a subscription transaction whose times no transaction can have: an expiry before its purchase,
    /// or a refund or upgrade before it. Its period would otherwise be dropped without a word (it would end before
    /// it began), and a copy under the same `web_order_line_item_id` (a restore), merged with it, would go with it.
    private func checkTimes() throws(Rejection) {
        guard let expires else { return }
        if expires < purchased {
            throw .invalid("transaction \(transactionId) expires at \(Timestamp.rfc3339(expires)), before its purchase at \(Timestamp.rfc3339(purchased))")
        }
        if let revoked, revoked < purchased {
            throw .invalid("transaction \(transactionId) is \(upgraded ? "upgraded" : "revoked") at \(Timestamp.rfc3339(revoked)), before its purchase at \(Timestamp.rfc3339(purchased))")
        }
    }

    /// The largest `quantity` read: StoreKit sells at most 10 units of a consumable in one payment; far beyond
    /// that a value is not a count but garbage, and multiplying a list price by it would invent revenue.
    private static let largestQuantity: Int64 = 1_000

    /// `quantity` (a number, or a numeric string in receipts): 1 when absent or null; an error when it is not a
    /// count from 1 to ``largestQuantity``.
    private static func quantity(_ value: JSON?, path: String, transactionId: String) throws(Rejection) -> Int64 {
        guard let value, !value.isNull else { return 1 }
        // `true` is no count, though `JSON.int64` reads it as 1.
        guard let quantity = value.integer, (1...largestQuantity).contains(quantity) else {
            let stated = value.integer.map(String.init) ?? "a JSON \(JSON.typeName(value))"
            throw .invalid("\(path.isEmpty ? "" : path + ".")quantity of transaction \(transactionId) is \(stated), not a count from 1 to \(largestQuantity)")
        }
        return quantity
    }

    /// Adds what the transaction states (``AppleFactKind``): a `period` (or a `one_time` purchase), its `upgrade`
    /// or its `revocation` as `revocation` reads its cancellation, the `user` (its `appAccountToken`, else the
    /// envelope's `app_user_id`) and the envelope's `currency`. The payload's currency wins over the envelope's for
    /// prices.
    func facts(into list: inout FactList, envelope: Envelope, revocation: RevocationReading) {
        let user = appAccountToken ?? envelope.appUserId
        let currency = self.currency ?? envelope.currency
        let subject = self.subject
        if let expires {
            list.add(.period(AppleFact.Period(
                subject: subject, transactionId: transactionId, start: purchased, end: expires, productId: productId,
                webOrderLineItemId: webOrderLineItemId, priceMicros: priceMicros, currency: currency,
                offer: trial ? .freeTrial : offerKindUnstated ? .unstatedOffer : introductory ? .introductory : .none,
                upgraded: upgraded)))
        } else {
            list.add(.oneTime(AppleFact.OneTime(transactionId: purchaseId, purchasedAt: originalPurchased ?? purchased,
                                                productId: productId, priceMicros: priceMicros,
                                                currency: currency, quantity: quantity)))
        }
        if let revoked, upgraded, expires != nil, revocation == .asStated {
            list.add(.upgrade(AppleFact.Upgrade(subject: subject, transactionId: transactionId, at: revoked)))
        } else if let revoked, revocation != .reversed {
            list.add(.revocation(AppleFact.Revocation(subject: subject, transactionId: purchaseId, at: revoked,
                                                      share: revocationPercentage, productId: productId)))
        }
        if let user { list.add(.user(subject: subject, at: purchased, id: user)) }
        if expires != nil, let context = envelope.currency {
            list.add(.currency(subject: subject, at: purchased, code: context))
        }
    }
}

/// One subscription's renewal state, whichever payload carried it: a receipt's `pending_renewal_info[]` entry
/// (legacy spellings) or a signed renewal info (`JWSRenewalInfoDecodedPayload`). Read once into this value, its
/// facts are written by ``facts(into:expiry:statedAt:)`` for every payload.
struct AppleRenewalInfo {
    var originalTransactionId: String
    /// Auto-renew on (`auto_renew_status` "1" / `autoRenewStatus` 1); `nil` when not stated.
    var autoRenewOn: Bool?
    var autoRenewProductId: String?
    var inBillingRetry = false
    /// The retry flag is stated and false (`is_in_billing_retry_period` "0" / `isInBillingRetryPeriod` false):
    /// beside `expirationIntent` 2, Apple no longer tries to renew.
    var retryStatedOver = false
    /// End of the grace period, ms UTC.
    var graceEnd: Millis?
    /// `expiration_intent` / `expirationIntent` as sent (1 voluntary, 2 billing, …; unknown values kept).
    var expirationIntent: String?
    /// `renewalDate` (signed renewal infos since 2023): the expiry of the subscription's most recent purchase, in
    /// the past too, whichever transaction the record carries beside it; the E of a billing issue it states.
    var renewalDate: Millis?
    /// The field names of this spelling, for the `detail` of a billing issue (what said so).
    var retryField = "isInBillingRetryPeriod"
    var intentField = "expirationIntent"

    /// A `pending_renewal_info` entry at `path`.
    init(pendingRenewal info: JSON, path: String, times: PlausibleTimes) throws(Rejection) {
        guard info.object != nil else {
            throw .invalid("\(path) is a JSON \(JSON.typeName(info)), not a pending renewal info")
        }
        guard let original = info["original_transaction_id"]?.nonEmptyString else {
            throw .invalid("\(path).original_transaction_id is missing")
        }
        originalTransactionId = original
        graceEnd = try AppleDate.time(info, "grace_period_expires_date", path: path, times: times)
        autoRenewOn = info["auto_renew_status"]?.bool
        autoRenewProductId = info["auto_renew_product_id"]?.nonEmptyString
        inBillingRetry = info["is_in_billing_retry_period"]?.bool == true
        retryStatedOver = info["is_in_billing_retry_period"]?.bool == false
        expirationIntent = info["expiration_intent"]?.nonEmptyString
        retryField = "is_in_billing_retry_period"
        intentField = "expiration_intent"
    }

    /// A signed renewal info's payload at `path`.
    init(signed r: JSON, path: String, times: PlausibleTimes) throws(Rejection) {
        guard let original = r["originalTransactionId"]?.nonEmptyString else {
            throw .invalid("renewal info without originalTransactionId")
        }
        originalTransactionId = original
        graceEnd = try AppleDate.signedTime(r, "gracePeriodExpiresDate", path: path, times: times)
        autoRenewOn = r["autoRenewStatus"]?.int64.map { $0 == 1 }
        autoRenewProductId = r["autoRenewProductId"]?.nonEmptyString
        inBillingRetry = r["isInBillingRetryPeriod"]?.bool == true
        retryStatedOver = r["isInBillingRetryPeriod"]?.bool == false
        expirationIntent = r["expirationIntent"]?.nonEmptyString
        renewalDate = try AppleDate.signedTime(r, "renewalDate", path: path, times: times)
    }

    /// Adds the auto-renew state (at `statedAt`, the statement time; else the latest instant of the record),
    /// a billing issue (in retry or grace, or expired for billing) and an expiry for any other intent, both at the
    /// end of the subscription's latest period: ``renewalDate`` when stated, else `expiry` (the expiry of the latest
    /// period the record shows), else the statement time, unless `undatedOutcomes` is false (the record's
    /// transaction may be an older one, as beside a refund request: then without ``renewalDate`` no time says
    /// where the period that failed or expired ended, and only the auto-renew state is added). A billing expiry
    /// stated after that end with the retry flag false also ends the billing retry at `statedAt` (only a record's
    /// own time, never a time guessed from its content). Nothing when the record gives no time at all. `statusAt`:
    /// when the auto-renew state held, if not at the statement time.
    func facts(into list: inout FactList, expiry: Millis?, statedAt: Millis?, statusAt: Millis? = nil,
               undatedOutcomes: Bool = true) {
        guard let stated = statedAt ?? list.latestInstant else { return }
        let subject = originalTransactionId
        if let on = autoRenewOn {
            list.add(.renewalStatus(AppleFact.RenewalStatus(subject: subject, at: statusAt ?? stated, autoRenew: on,
                                                            productId: autoRenewProductId)))
        }
        let expiry = renewalDate ?? expiry
        guard expiry != nil || undatedOutcomes else { return }
        let noticeAt = expiry ?? stated
        // Apple sends the grace end only while a subscription is in grace, after the period that failed to renew.
        // One at or before the latest expiry the record shows belongs to an episode that period's renewal closed:
        // not a new billing issue at that expiry.
        let graceEnd = self.graceEnd.flatMap { grace -> Millis? in
            if let expiry, grace <= expiry { return nil }
            return grace
        }
        // Retry stated over for a billing error, after the grace (an archive may keep a grace end that has passed).
        let retryOver = !inBillingRetry && retryStatedOver && expirationIntent == "2"
            && graceEnd.map { grace in statedAt.map { grace <= $0 } ?? false } ?? true
        if inBillingRetry || (graceEnd != nil && !retryOver) {
            list.add(.billingIssue(AppleFact.BillingIssue(subject: subject, at: noticeAt, graceEnd: graceEnd,
                                                          statedBy: retryField)))
        } else if expirationIntent == "2" {
            list.add(.billingIssue(AppleFact.BillingIssue(subject: subject, at: noticeAt, graceEnd: graceEnd,
                                                          statedBy: intentField)))
            // Stated after the period's end with retry over: the episode was lost by then (as a V2 EXPIRED with
            // subtype BILLING_RETRY says at its own time), not left open until Apple's longest retry has passed.
            if retryStatedOver, let expiry, let statedAt, statedAt > expiry {
                list.add(.expiry(AppleFact.Expiry(subject: subject, at: statedAt, reason: .billing, periodEnd: expiry)))
            }
        }
        if let intent = expirationIntent, intent != "2" {
            list.add(.expiry(AppleFact.Expiry(subject: subject, at: noticeAt, reason: ExpirationReason(intent: intent),
                                              periodEnd: expiry)))
        }
    }
}

/// How a transaction's cancellation date (`cancellation_date`, `revocationDate`) is read: only a V2 notification
/// says what happened to it.
enum RevocationReading {
    /// Beside `is_upgraded` / `isUpgraded` it is the upgrade (no refund); otherwise a refund or revocation.
    case asStated
    /// A REFUND or REVOKE notification: a refund or revocation, even of a transaction an upgrade had ended.
    case refund
    /// A REFUND_REVERSED notification restates the transaction to undo its refund: no revocation.
    case reversed
}

import Facts
import Ingest

/// The receipt content shared by verifyReceipt responses and V1 notifications' `unified_receipt`:
/// transaction entries and `pending_renewal_info`, in their legacy spellings (numbers and booleans as
/// strings, dates as `*_ms` strings or iOS 6 / iOS 7 `*_date` values).
struct LegacyReceipt {
    /// One entry per `transaction_id`; `latest_receipt_info` wins over `receipt.in_app` for the same id.
    var entries: [JSON] = []
    var pendingRenewals: [JSON] = []
    /// Latest expiry per `original_transaction_id` among the subscription entries: E for a failure notice.
    private(set) var latestExpiry: [String: Millis] = [:]

    init(inApp: [JSON], latest: [JSON], pending: [JSON]) {
        var order: [String] = []
        var byId: [String: JSON] = [:]
        var anonymous: [JSON] = []
        for entry in inApp + latest {
            guard let id = entry["transaction_id"]?.nonEmptyString else {
                anonymous.append(entry)
                continue
            }
            if byId[id] == nil { order.append(id) }
            byId[id] = entry
        }
        entries = order.compactMap { byId[$0] } + anonymous
        pendingRenewals = pending
    }

    /// Lists an array member, accepting the iOS 6 shape where a single object stands for a one-element array.
    static func list(_ value: JSON?) -> [JSON] {
        guard let value else { return [] }
        if let array = value.array { return array }
        if value.object != nil { return [value] }
        return []
    }

    /// Writes the facts of every entry and renewal info; `statedAt` is the statement time used for states that
    /// carry no time of their own (auto-renew status in a pending renewal info).
    /// - Throws: ``Rejection/excluded(_:)`` when every entry is family-shared; `.invalid` for an entry without
    ///   its identifiers or dates.
    mutating func translate(into list: inout FactList, envelope: Envelope, statedAt: Millis?) throws(Rejection) {
        var familyShared = 0
        for entry in entries {
            guard entry.object != nil else { throw .invalid("receipt entry is not an object") }
            if entry["in_app_ownership_type"]?.string == "FAMILY_SHARED" {
                familyShared += 1
                continue
            }
            try translateEntry(entry, into: &list, envelope: envelope)
        }
        if familyShared > 0, familyShared == entries.count { throw .excluded(.familyShared) }
        for info in pendingRenewals {
            try translateRenewal(info, into: &list, statedAt: statedAt)
        }
    }

    private mutating func translateEntry(_ entry: JSON, into list: inout FactList,
                                         envelope: Envelope) throws(Rejection) {
        guard let transactionId = entry["transaction_id"]?.nonEmptyString else {
            throw .invalid("receipt entry without transaction_id")
        }
        guard let productId = entry["product_id"]?.nonEmptyString else {
            throw .invalid("receipt entry \(transactionId) without product_id")
        }
        guard let purchased = AppleDate.millis(entry, "purchase_date") else {
            throw .invalid("receipt entry \(transactionId) without a readable purchase_date")
        }
        let original = entry["original_transaction_id"]?.nonEmptyString ?? transactionId
        let cancelled = AppleDate.millis(entry, "cancellation_date")
        let upgraded = entry["is_upgraded"]?.bool == true
        let currency = envelope.currency

        if AppleDate.has(entry, "expires_date") {
            guard let expires = AppleDate.millis(entry, "expires_date") else {
                throw .invalid("receipt entry \(transactionId) has an unreadable expires_date")
            }
            var flags: Fact.Flags = []
            if entry["is_trial_period"]?.bool == true { flags.insert(.trial) }
            if entry["is_in_intro_offer_period"]?.bool == true, !flags.contains(.trial) { flags.insert(.introductory) }
            var end = expires
            if upgraded {
                flags.insert(.upgraded)
                if let cancelled { end = min(expires, cancelled) }
            }
            list.add(AppleFactKind.period, subject: original, at: purchased, ref: transactionId,
                     detail: entry["web_order_line_item_id"]?.nonEmptyString, productId: productId, end: end,
                     currency: currency, flags: flags)
            latestExpiry[original] = max(latestExpiry[original] ?? expires, expires)
            if let cancelled, !upgraded {
                list.add(AppleFactKind.revocation, subject: original, at: cancelled, ref: transactionId,
                         detail: "100000", productId: productId)
            }
            if let user = envelope.appUserId { list.add(AppleFactKind.user, subject: original, at: purchased, ref: user) }
            if let currency { list.add(AppleFactKind.currency, subject: original, at: purchased, currency: currency) }
        } else {
            list.add(AppleFactKind.oneTime, subject: transactionId, at: purchased, ref: transactionId,
                     productId: productId, currency: currency)
            if let cancelled {
                list.add(AppleFactKind.revocation, subject: transactionId, at: cancelled, ref: transactionId,
                         detail: "100000", productId: productId)
            }
            if let user = envelope.appUserId { list.add(AppleFactKind.user, subject: transactionId, at: purchased, ref: user) }
        }
    }

    private func translateRenewal(_ info: JSON, into list: inout FactList, statedAt: Millis?) throws(Rejection) {
        guard info.object != nil else { throw .invalid("pending_renewal_info entry is not an object") }
        guard let original = info["original_transaction_id"]?.nonEmptyString else {
            throw .invalid("pending_renewal_info entry without original_transaction_id")
        }
        let expiry = latestExpiry[original]
        let noticeAt = expiry ?? statedAt ?? list.latestInstant
        guard let noticeAt else { return }
        let grace = AppleDate.millis(info, "grace_period_expires_date")
        if let on = info["auto_renew_status"]?.bool, let at = statedAt ?? list.latestInstant {
            list.add(AppleFactKind.renewalStatus, subject: original, at: at,
                     productId: info["auto_renew_product_id"]?.nonEmptyString, flags: on ? .on : [])
        }
        let intent = info["expiration_intent"]?.nonEmptyString
        if info["is_in_billing_retry_period"]?.bool == true || grace != nil {
            list.add(AppleFactKind.billingIssue, subject: original, at: noticeAt, detail: "is_in_billing_retry_period",
                     end: grace)
        } else if intent == "2" {
            list.add(AppleFactKind.billingIssue, subject: original, at: noticeAt, detail: "expiration_intent")
        }
        if let intent, intent != "2" {
            list.add(AppleFactKind.expiry, subject: original, at: noticeAt, detail: ExpirationReason.fromIntent(intent),
                     end: expiry)
        }
    }
}

/// The `detail` of an ``AppleFactKind/expiry`` fact.
enum ExpirationReason {
    static let voluntary = "voluntary"
    static let billing = "billing"
    static let priceIncrease = "price_increase"
    static let productUnavailable = "product_unavailable"
    static let other = "other"

    /// `expiration_intent` / `expirationIntent`: 1 voluntary, 2 billing, 3 price increase, 4 product
    /// unavailable, 5 other; any other value is kept raw.
    static func fromIntent(_ intent: String) -> String {
        switch intent {
        case "1": return voluntary
        case "2": return billing
        case "3": return priceIncrease
        case "4": return productUnavailable
        case "5": return other
        default: return intent
        }
    }

    /// V2 EXPIRED subtypes; `nil` (no subtype) is `other`, unknown subtypes are kept raw.
    static func fromSubtype(_ subtype: String?) -> String {
        switch subtype {
        case "VOLUNTARY": return voluntary
        case "BILLING_RETRY": return billing
        case "PRICE_INCREASE": return priceIncrease
        case "PRODUCT_NOT_FOR_SALE": return productUnavailable
        case nil: return other
        case let raw?: return raw
        }
    }
}

import Facts
import Ingest

/// The receipt content shared by verifyReceipt responses and V1 notifications' `unified_receipt`:
/// transaction entries and `pending_renewal_info`, in their legacy spellings (numbers and booleans as
/// strings, dates as `*_ms` strings or iOS 6 / iOS 7 `*_date` values).
///
/// Each entry is a unit of its own: one that cannot be read (not an object, an identifier or a date missing, a
/// time outside ``times``) is quarantined as a part, named by its path (`latest_receipt_info[3]`), while the
/// others are used.
struct LegacyReceipt {
    /// An entry and its path in the payload.
    typealias Entry = (path: String, value: JSON)

    /// One entry per `transaction_id`; `latest_receipt_info` wins over `receipt.in_app` for the same id.
    var entries: [Entry] = []
    var pendingRenewals: [Entry] = []
    let times: PlausibleTimes
    /// Latest expiry per `original_transaction_id` among the subscription entries: E for a failure notice.
    private(set) var latestExpiry: [String: Millis] = [:]

    init(inApp: [Entry], latest: [Entry], pending: [Entry], times: PlausibleTimes) {
        var order: [String] = []
        var byId: [String: Entry] = [:]
        var anonymous: [Entry] = []
        for entry in inApp + latest {
            guard let id = entry.value["transaction_id"]?.nonEmptyString else {
                anonymous.append(entry)
                continue
            }
            if byId[id] == nil { order.append(id) }
            byId[id] = entry
        }
        entries = order.compactMap { byId[$0] } + anonymous
        pendingRenewals = pending
        self.times = times
    }

    /// Writes the facts of every entry and renewal info; `statedAt` is the statement time used for states that
    /// carry no time of their own (auto-renew status in a pending renewal info).
    /// - Throws: ``Rejection/excluded(_:)`` when every readable entry is family-shared.
    mutating func translate(into list: inout FactList, envelope: Envelope, statedAt: Millis?) throws(Rejection) {
        var familyShared = 0
        var read = 0
        for entry in entries {
            let shared = try list.part(entry.path, entry.value) { list throws(Rejection) -> Bool? in
                guard entry.value.object != nil else {
                    throw .invalid("\(entry.path) is a JSON \(JSON.typeName(entry.value)), not a receipt entry")
                }
                if entry.value["in_app_ownership_type"]?.string == "FAMILY_SHARED" { return true }
                try translateEntry(entry, into: &list, envelope: envelope)
                return false
            }
            guard let shared else { continue }
            read += 1
            if shared { familyShared += 1 }
        }
        if familyShared > 0, familyShared == read { throw .excluded(.familyShared) }
        for info in pendingRenewals {
            _ = try list.part(info.path, info.value) { list throws(Rejection) -> Bool? in
                try translateRenewal(info, into: &list, statedAt: statedAt)
                return true
            }
        }
    }

    private mutating func translateEntry(_ entry: Entry, into list: inout FactList,
                                         envelope: Envelope) throws(Rejection) {
        let (path, value) = entry
        guard let transactionId = value["transaction_id"]?.nonEmptyString else {
            throw .invalid("\(path).transaction_id is missing")
        }
        guard let productId = value["product_id"]?.nonEmptyString else {
            throw .invalid("\(path).product_id of transaction \(transactionId) is missing")
        }
        guard let purchased = try AppleDate.time(value, "purchase_date", path: path, times: times) else {
            throw .invalid("\(path).purchase_date of transaction \(transactionId) is missing or unreadable")
        }
        let original = value["original_transaction_id"]?.nonEmptyString ?? transactionId
        let cancelled = try AppleDate.time(value, "cancellation_date", path: path, times: times)
        let upgraded = value["is_upgraded"]?.bool == true
        let currency = envelope.currency

        if AppleDate.has(value, "expires_date") {
            guard let expires = try AppleDate.time(value, "expires_date", path: path, times: times) else {
                throw .invalid("\(path).expires_date of transaction \(transactionId) is unreadable")
            }
            var flags: Fact.Flags = []
            if value["is_trial_period"]?.bool == true { flags.insert(.trial) }
            if value["is_in_intro_offer_period"]?.bool == true, !flags.contains(.trial) { flags.insert(.introductory) }
            var end = expires
            if upgraded {
                flags.insert(.upgraded)
                if let cancelled { end = min(expires, cancelled) }
            }
            list.add(AppleFactKind.period, subject: original, at: purchased, ref: transactionId,
                     detail: value["web_order_line_item_id"]?.nonEmptyString, productId: productId, end: end,
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

    private func translateRenewal(_ entry: Entry, into list: inout FactList, statedAt: Millis?) throws(Rejection) {
        let (path, info) = entry
        guard info.object != nil else {
            throw .invalid("\(path) is a JSON \(JSON.typeName(info)), not a pending renewal info")
        }
        guard let original = info["original_transaction_id"]?.nonEmptyString else {
            throw .invalid("\(path).original_transaction_id is missing")
        }
        let grace = try AppleDate.time(info, "grace_period_expires_date", path: path, times: times)
        let expiry = latestExpiry[original]
        let noticeAt = expiry ?? statedAt ?? list.latestInstant
        guard let noticeAt else { return }
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

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
    /// Latest end per `original_transaction_id` among the subscription entries (an upgraded one's at its upgrade):
    /// E for a failure notice.
    private(set) var latestExpiry: [String: Millis] = [:]
    /// By `original_transaction_id`: the subscription transaction with the latest expiry among those no upgrade or
    /// refund ended (the renewal a V1 recovery names), its purchase date and expiry.
    private(set) var latestRenewal: [String: (purchased: Millis, expires: Millis)] = [:]
    /// By `original_transaction_id`: the latest sold expiry of upgraded entries without a `cancellation_date` (Apple
    /// states one only for refunds and revocations in later receipts), which ended at an upgrade no date says: an
    /// end only for a subscription whose receipt shows nothing else.
    private var upgradedExpiry: [String: Millis] = [:]

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
    /// - Parameter statusAsOfPayload: date the renewal infos' auto-renew status at the newest instant the entries
    ///   show (a V1 notification, sent at its event and delivered up to days later), not at `statedAt`.
    mutating func translate(into list: inout FactList, envelope: Envelope, statedAt: Millis?,
                            statusAsOfPayload: Bool = false) throws(Rejection) {
        var family = FamilySharing()
        var shared: Set<String> = []
        for entry in entries {
            family.count(try list.part(entry.path, entry.value) { list throws(Rejection) -> Bool? in
                if entry.value["in_app_ownership_type"]?.string == "FAMILY_SHARED" {
                    if let original = entry.value["original_transaction_id"]?.nonEmptyString { shared.insert(original) }
                    return true
                }
                try translateEntry(entry, into: &list, envelope: envelope)
                return false
            })
        }
        try family.check()
        for (original, expires) in upgradedExpiry where latestExpiry[original] == nil { latestExpiry[original] = expires }
        // A family member's renewal info is about a subscription someone else pays for: excluded like its entries.
        let statusAt = statusAsOfPayload ? list.latestInstant : nil
        for info in pendingRenewals where !isSharedOnly(info, shared: shared) {
            _ = try list.part(info.path, info.value) { list throws(Rejection) -> Bool? in
                try translateRenewal(info, into: &list, statedAt: statedAt, statusAt: statusAt)
                return true
            }
        }
    }

    /// Whether `info` renews a subscription only family-shared entries of this receipt show.
    private func isSharedOnly(_ info: Entry, shared: Set<String>) -> Bool {
        guard let original = info.value["original_transaction_id"]?.nonEmptyString, shared.contains(original) else { return false }
        return latestExpiry[original] == nil
    }

    private mutating func translateEntry(_ entry: Entry, into list: inout FactList,
                                         envelope: Envelope) throws(Rejection) {
        let transaction = try AppleTransaction(receiptEntry: entry.value, path: entry.path, times: times)
        transaction.facts(into: &list, envelope: envelope, revocation: .asStated)
        if let expires = transaction.expires {
            let original = transaction.originalTransactionId
            // A recovery renews the plan in force: not a transaction an upgrade or a refund ended.
            if !transaction.upgraded, transaction.revoked == nil, expires >= latestRenewal[original]?.expires ?? expires {
                latestRenewal[original] = (transaction.purchased, expires)
            }
            // An upgraded transaction's access ended at the upgrade (its cancellation date), not at the expiry it
            // was sold with, which may lie after the new plan's latest one.
            if transaction.upgraded, transaction.revoked == nil {
                upgradedExpiry[original] = max(upgradedExpiry[original] ?? expires, expires)
            } else {
                let end = transaction.upgraded ? min(expires, transaction.revoked ?? expires) : expires
                latestExpiry[original] = max(latestExpiry[original] ?? end, end)
            }
        }
    }

    private func translateRenewal(_ entry: Entry, into list: inout FactList, statedAt: Millis?,
                                  statusAt: Millis?) throws(Rejection) {
        let info = try AppleRenewalInfo(pendingRenewal: entry.value, path: entry.path, times: times)
        let expiry = latestExpiry[info.originalTransactionId]
        // Only while the subscription ran when the record came: a notice about a lapsed one (a CONSUMPTION_REQUEST
        // after the expiry) states the state after the lapse, which its newest event predates.
        let running = info.expirationIntent == nil && (expiry ?? .min) > (statedAt ?? .max)
        info.facts(into: &list, expiry: expiry, statedAt: statedAt, statusAt: running ? statusAt : nil)
    }
}

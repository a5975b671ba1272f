import Facts
import Ingest

/// App Store Server API responses, as backends archive them now that `verifyReceipt` is deprecated: Get
/// Transaction History (`HistoryResponse`) and Get All Subscription Statuses (`StatusResponse`).
///
/// Neither response is signed as a whole: every JWS in it is verified on its own, like a bare signed
/// transaction, and is a unit of the record (one that fails is quarantined as a part, named by its path, and
/// the others are used). Their transactions and renewal infos give exactly the facts the same JWS give inside a
/// V2 notification; the statement time of each is its own `signedDate` (when Apple produced the response).
/// A `status` of a status item (1 active … 5 revoked) adds nothing: the renewal info beside it says why.
/// `revision` and `hasMore` page the history; each page is a record, and a transaction on two pages is one
/// fact. `environment` Sandbox / Xcode / LocalTesting excludes the response (`sandbox`).
extension AppStoreTranslator {
    /// A `HistoryResponse`: `signedTransactions[]`, `revision`, `hasMore`, `bundleId`, `appAppleId`, `environment`.
    func transactionHistory(_ body: JSON, envelope: Envelope) throws(Rejection) -> Translation {
        guard body.object != nil else { throw .invalid("transaction history response is not an object") }
        try checkResponse(body)
        var list = FactList()
        var latest: Millis?
        var family = FamilySharing()
        for (path, value) in try list.elements(body, "signedTransactions") {
            let unit = try transactionUnit(value, path: path, envelope: envelope, into: &list, latest: &latest)
            family.count(unit?.familyShared)
        }
        try family.check()
        return list.translation(observedAt: latest ?? envelope.receivedAt ?? 0)
    }

    /// A Get Notification History response (`notificationHistory[]` of `{signedPayload, sendAttempts}`, `hasMore`,
    /// `paginationToken`): the page a backfill of missed notifications archives. Each notification is read as if it
    /// had been archived alone (``notificationV2(_:envelope:decoded:)``); one that cannot be used is quarantined as
    /// a part (`notificationHistory[3]`, or a part of it under that path), a sandbox or test one states nothing, and a
    /// page of those alone is excluded as the first of them is. The same notification pushed and archived on its
    /// own states the same facts, which the ledger keeps once.
    func notificationHistory(_ body: JSON, envelope: Envelope) throws(Rejection) -> Translation {
        guard let items = body["notificationHistory"]?.array else { throw .invalid("notificationHistory is not an array") }
        var facts: [Fact] = []
        var parts: [QuarantinedPart] = []
        var exclusions: [ExclusionReason] = []
        for (index, item) in items.enumerated() {
            let path = "notificationHistory[\(index)]"
            do throws(Rejection) {
                guard let text = item["signedPayload"]?.nonEmptyString else { throw .invalid("\(path).signedPayload is missing") }
                // Whether thrown or returned (a notification none of whose units could be read), an exclusion or a
                // quarantine of one notification is this page's, as a part: never dropped unsaid.
                switch try notificationV2(text, envelope: envelope, decoded: nil) {
                case .used(let stated, let statedParts):
                    facts += stated
                    parts += statedParts.map { QuarantinedPart(path: JSON.path(path, $0.path), reason: $0.reason, detail: $0.detail, raw: $0.raw) }
                case .excluded(let reason, _): throw Rejection.excluded(reason)
                case .quarantined(let reason, let detail): throw Rejection.quarantined(reason, detail)
                }
            } catch {
                switch error {
                case .excluded(let reason): exclusions.append(reason)
                case .quarantined(let reason, let detail):
                    parts.append(QuarantinedPart(path: path, reason: reason, detail: detail, raw: Array(JSONWriter.compact(item).utf8)))
                }
            }
        }
        if facts.isEmpty, parts.isEmpty, let excluded = exclusions.first { throw .excluded(excluded) }
        if facts.isEmpty, exclusions.isEmpty, let first = parts.first, parts.count == items.count {
            throw .quarantined(first.reason, "\(first.path): \(first.detail)")
        }
        return .used(facts, parts: parts)
    }

    /// A `StatusResponse`: `data[]` of `SubscriptionGroupIdentifierItem` (`subscriptionGroupIdentifier`,
    /// `lastTransactions[]` of `LastTransactionsItem`: `originalTransactionId`, `status`, `signedTransactionInfo`,
    /// `signedRenewalInfo`), `bundleId`, `appAppleId`, `environment`.
    ///
    /// A status item is a transaction and its renewal info, read as a V2 notification reads its `data`: the
    /// renewal info's billing and expiry facts are dated at the transaction's expiry.
    func subscriptionStatuses(_ body: JSON, envelope: Envelope) throws(Rejection) -> Translation {
        guard body.object != nil else { throw .invalid("subscription statuses response is not an object") }
        try checkResponse(body)
        var list = FactList()
        var latest: Millis?
        var family = FamilySharing()
        for (groupPath, group) in try list.elements(body, "data") {
            for (path, item) in try list.elements(group, "lastTransactions", path: groupPath) {
                let transactionPath = path + ".signedTransactionInfo", renewalPath = path + ".signedRenewalInfo"
                var expiry: Millis?
                if let value = item["signedTransactionInfo"], !value.isNull {
                    let unit = try transactionUnit(value, path: transactionPath, envelope: envelope, into: &list,
                                                   latest: &latest)
                    family.count(unit?.familyShared)
                    if unit?.familyShared == true { continue }
                    expiry = unit?.expires
                }
                if let value = item["signedRenewalInfo"], !value.isNull {
                    _ = try list.part(renewalPath, value) { list throws(Rejection) -> Bool? in
                        let (renewal, signedDate) = try signed(value, path: renewalPath, envelope: envelope,
                                                               bundleRequired: false)
                        try translateRenewal(renewal, path: renewalPath, expiry: expiry, statedAt: signedDate, into: &list)
                        latest = max(latest ?? signedDate, signedDate)
                        return true
                    }
                }
            }
        }
        try family.check()
        return list.translation(observedAt: latest ?? envelope.receivedAt ?? 0)
    }

    /// The signed transaction `value` at `path`, verified and translated as a unit of the record (set aside as a
    /// part when it cannot be read: `nil`); a family-shared one states nothing. `latest` keeps the latest
    /// `signedDate` read.
    private func transactionUnit(_ value: JSON, path: String, envelope: Envelope, into list: inout FactList,
                                 latest: inout Millis?) throws(Rejection) -> (familyShared: Bool, expires: Millis?)? {
        var signedAt: Millis?
        let unit = try list.part(path, value) { list throws(Rejection) -> (familyShared: Bool, expires: Millis?)? in
            let (transaction, signedDate) = try signed(value, path: path, envelope: envelope, bundleRequired: true)
            if transaction["inAppOwnershipType"]?.string == "FAMILY_SHARED" { return (true, nil) }
            let expires = try translateTransaction(transaction, path: path, envelope: envelope, into: &list,
                                                   revocation: .asStated).expires
            signedAt = signedDate
            return (false, expires)
        }
        if let signedAt { latest = max(latest ?? signedAt, signedAt) }
        return unit
    }

    /// The response's own `bundleId` (checked when the response names one; every JWS names its own too) and
    /// `environment`.
    private func checkResponse(_ body: JSON) throws(Rejection) {
        if let bundle = body["bundleId"], !bundle.isNull { try checkBundle(bundle) }
        try checkEnvironment(body["environment"])
    }

    /// The verified payload of the JWS `value` at `path`, and its `signedDate`; its environment checked, and its
    /// `bundleId` (a transaction must have one, `bundleRequired`; a renewal info is checked when it has one).
    private func signed(_ value: JSON, path: String, envelope: Envelope,
                        bundleRequired: Bool) throws(Rejection) -> (JSON, Millis) {
        guard case .string(let text) = value, !text.isEmpty else {
            throw .invalid("\(path) is a JSON \(JSON.typeName(value)), not a JWS")
        }
        let payload = try verified(text, envelope: envelope, decoded: nil)
        if bundleRequired || payload["bundleId"] != nil { try checkBundle(payload["bundleId"]) }
        try checkEnvironment(payload["environment"])
        guard let signedDate = try millis(payload, "signedDate", path: path) else {
            throw .invalid("\(path) has no numeric signedDate")
        }
        return (payload, signedDate)
    }
}

/// Counts a record's transactions that are family-shared: a record of nothing else is excluded
/// (`family_shared`), as a receipt of only family-shared entries is.
struct FamilySharing {
    private var read = 0
    private var shared = 0

    /// Notes one unit: `true` family-shared, `false` purchased, `nil` set aside as unreadable.
    mutating func count(_ isShared: Bool?) {
        guard let isShared else { return }
        read += 1
        if isShared { shared += 1 }
    }

    /// - Throws: ``Rejection/excluded(_:)`` (`familyShared`) when every readable unit was family-shared.
    func check() throws(Rejection) {
        if shared > 0, shared == read { throw .excluded(.familyShared) }
    }
}

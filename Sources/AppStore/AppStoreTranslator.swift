import Facts
import Ingest

/// Turns one Apple record (verifyReceipt response, V1 or V2 App Store Server Notification, bare signed
/// transaction or renewal info, App Store Server API transaction history or subscription statuses) into facts (see ``AppleFactKind`` for what each fact says).
///
/// Outcomes: sandbox / Xcode / LocalTesting data and `receipt_type` ProductionSandbox are `.excluded(.sandbox)`,
/// TEST notifications `.excluded(.test)`, non-zero receipt `status` `.excluded(.receiptStatus)`, records whose
/// entries are all family-shared `.excluded(.familyShared)`; a JWS that fails ``JWSVerifier`` is
/// `.quarantined(.badSignature)`, one for another app `.quarantined(.wrongBundle)`, a missing or mistyped required
/// field `.quarantined(.invalidPayload)`, a time outside ``times`` `.quarantined(.implausibleTimestamp)`. Where a
/// record holds several units (receipt entries, renewal infos, a notification's transaction and renewal info and
/// its own statement), a unit that cannot be read is quarantined as a part, named by its path, and the others
/// are used; only a record with nothing usable left is quarantined whole. Nothing is thrown and nothing crashes
/// on bad input.
///
/// Nested JWS: the `signedTransactionInfo` and `signedRenewalInfo` inside a verified `signedPayload` are verified
/// too, each against its own `x5c` chain and signature, as the contract asks of every JWS (inputs.md); a nested
/// JWS that fails quarantines its part (`bad_signature`), never the facts of the others. Bare transactions and
/// renewal infos (no outer envelope) are verified like a `signedPayload`.
public struct AppStoreTranslator: StoreTranslator {
    /// Apple Root CA - G3 as DER, the root production App Store signatures chain to.
    public static let appleRootCAG3: [[UInt8]] = [Base64URL.decode(appleRootCAG3Base64) ?? []]

    /// The version of this translator's rules and of the rows its facts are stored as: the translation's own
    /// version (raised whenever a change makes some payload yield other facts or another outcome; 3: App Store
    /// Server API responses; 4: a grace end before the latest expiry is no billing issue; 5: nested JWS verified;
    /// 6: a restored one-time product is its original purchase; 7: a V1 notice's subscription from its renewal
    /// infos, family members' renewal infos left out; 8: a refund share outside 0...100000 quarantined; 9: a
    /// one-time product's `quantity` read, a count outside 1...1000 quarantined; 10: a boolean `quantity` is no
    /// count; 11: a receipt's promotional offer or offer code is a paid offer; 12: a transaction expiring, refunded
    /// or upgraded before its purchase is rejected, a signed transaction's offer of any type is a paid offer; 13: a
    /// REFUND or REVOKE notification's revocation is a refund even beside `isUpgraded`; 14: a RESCIND_CONSENT
    /// notification's `appData` names its bundle; 15: a negative price rejected; 16: a billing recovery (V2
    /// DID_RENEW BILLING_RECOVERY, V1 DID_RECOVER or RENEWAL) states its billing issue, a Get Transaction Info
    /// response is read; 17: a renewal info's outcome dated by `renewalDate`, never by a refund request's older
    /// transaction, a receipt's upgraded transaction ending at its upgrade, a billing retry stated over ending the
    /// episode; 18: a price above ``Fact/largestAmountMicros`` out of range; 19: a notification V2 without
    /// `signedDate` dated by its transaction's or renewal info's; 20: retry stated over for a billing error beside
    /// a grace end that has passed ends the episode; 21: a V1 notification's renewal infos state the auto-renew
    /// state at the receipt's newest event; 22: only while the subscription ran when the notice came; 23: a V1
    /// REFUND or CANCEL whose receipt shows no refunded transaction quarantines its notification part) plus
    /// ``AppleFactCodec/version``, so that ledgers translated before either changed are reprocessed
    /// (``RulesVersion``).
    public static let rulesVersion: Int64 = 23 + AppleFactCodec.version

    let bundleIds: Set<String>
    let verifier: JWSVerifier
    /// The instants a payload may state (the run's clock is in it).
    let times: PlausibleTimes

    /// - Parameters:
    ///   - trustedRoots: DER certificates JWS chains must reach (``appleRootCAG3`` in production).
    ///   - bundleIds: accepted `bundleId`s of signed payloads; empty accepts any.
    ///   - times: the instants a payload may state; anything outside is `implausible_timestamp`.
    /// - Throws: ``AppStoreError/unparsableRoot(index:reason:)``.
    public init(trustedRoots: [[UInt8]], bundleIds: Set<String>, times: PlausibleTimes) throws(AppStoreError) {
        self.verifier = try JWSVerifier(trustedRoots: trustedRoots)
        self.bundleIds = bundleIds
        self.times = times
    }

    public var platform: Platform { .apple }

    /// Translates one record whose `source` is one of the `apple.*` kinds.
    public func translate(_ record: ParsedRecord) -> Translation {
        do throws(Rejection) {
            return try facts(of: record)
        } catch {
            switch error {
            case .excluded(let reason): return .excluded(reason)
            case .quarantined(let reason, let detail): return .quarantined(reason, detail: detail)
            }
        }
    }

    private func facts(of record: ParsedRecord) throws(Rejection) -> Translation {
        switch (record.source, record.payload) {
        case (.appleVerifyReceipt, .json(let body)):
            return try verifyReceipt(body, envelope: record.envelope)
        case (.appleNotificationV1, .json(let body)):
            return try notificationV1(body, envelope: record.envelope)
        case (.appleNotificationV2, .jws(let text)):
            return try notificationV2(text, envelope: record.envelope, decoded: record.decodedJWS)
        case (.appleNotificationV2, .json(let body)) where body["notificationHistory"] != nil:
            return try notificationHistory(body, envelope: record.envelope)
        case (.appleNotificationV2, .json(let body)):
            guard let text = body["signedPayload"]?.nonEmptyString else {
                throw .invalid("notification V2 without signedPayload")
            }
            return try notificationV2(text, envelope: record.envelope, decoded: record.decodedJWS)
        case (.appleTransaction, .jws(let text)):
            return try signedTransaction(text, envelope: record.envelope, decoded: record.decodedJWS)
        case (.appleRenewalInfo, .jws(let text)):
            return try signedRenewalInfo(text, envelope: record.envelope, decoded: record.decodedJWS)
        case (.appleTransactionHistory, .json(let body)):
            return try transactionHistory(body, envelope: record.envelope)
        case (.appleSubscriptionStatuses, .json(let body)):
            return try subscriptionStatuses(body, envelope: record.envelope)
        case (.appleTransaction, .json(let body)):
            // A Get Transaction Info response (`TransactionInfoResponse`) wraps the one signed transaction.
            guard let text = body["signedTransactionInfo"]?.nonEmptyString, body["signedRenewalInfo"] == nil else {
                throw .invalid("apple.transaction must be a JWS, or a Get Transaction Info response: signedTransactionInfo alone")
            }
            return try signedTransaction(text, envelope: record.envelope, decoded: record.decodedJWS)
        case (.appleRenewalInfo, .json):
            throw .invalid("\(record.source.rawValue) must be a JWS")
        case (.appleVerifyReceipt, .jws), (.appleNotificationV1, .jws), (.appleTransactionHistory, .jws),
             (.appleSubscriptionStatuses, .jws):
            throw .invalid("\(record.source.rawValue) must be a JSON object")
        default:
            throw .quarantined(.unrecognized, "\(record.source.rawValue) is not an App Store payload")
        }
    }

    // MARK: verifyReceipt

    private func verifyReceipt(_ body: JSON, envelope: Envelope) throws(Rejection) -> Translation {
        guard body.object != nil else { throw .invalid("verifyReceipt response is not an object") }
        guard let status = body["status"]?.int64 else { throw .invalid("verifyReceipt response without numeric status") }
        guard status == 0 else { throw .excluded(.receiptStatus) }
        if body["environment"]?.string == "Sandbox" { throw .excluded(.sandbox) }
        var list = FactList()
        let receipt = try list.container(body, "receipt")
        if receipt?["receipt_type"]?.string == "ProductionSandbox" { throw .excluded(.sandbox) }

        var inApp = try list.elements(receipt, "in_app", path: "receipt")
        // iOS 6 style: the receipt itself is the one transaction.
        if inApp.isEmpty, let receipt, receipt["transaction_id"] != nil { inApp = [("receipt", receipt)] }
        var legacy = LegacyReceipt(inApp: inApp,
                                   latest: try list.elements(body, "latest_receipt_info"),
                                   pending: try list.elements(body, "pending_renewal_info"),
                                   times: times)
        var requested: Millis?
        if let receipt { requested = try AppleDate.time(receipt, "request_date", path: "receipt", times: times) }
        try legacy.translate(into: &list, envelope: envelope, statedAt: requested ?? envelope.receivedAt)
        return list.translation(observedAt: requested ?? envelope.receivedAt ?? list.latestInstant ?? 0)
    }

    // MARK: V1 notifications

    private func notificationV1(_ body: JSON, envelope: Envelope) throws(Rejection) -> Translation {
        guard body.object != nil else { throw .invalid("notification V1 is not an object") }
        guard let type = body["notification_type"]?.nonEmptyString else {
            throw .invalid("notification V1 without notification_type")
        }
        var list = FactList()
        let unified = try list.container(body, "unified_receipt")
        if body["environment"]?.string == "Sandbox" || unified?["environment"]?.string == "Sandbox" {
            throw .excluded(.sandbox)
        }
        if let status = unified?["status"]?.int64, status != 0 { throw .excluded(.receiptStatus) }

        // Notifications before 2020 had no unified_receipt: the iOS 6-style `latest_receipt_info` object (or,
        // once expired, `latest_expired_receipt_info`) sits at the top level; in 2020–21 both were sent. All are
        // read, the unified receipt last so that its entry wins for a transaction both show.
        let latest = try list.elements(body, "latest_receipt_info") + list.elements(body, "latest_expired_receipt_info")
            + list.elements(unified, "latest_receipt_info", path: "unified_receipt")
        var legacy = LegacyReceipt(inApp: [], latest: latest,
                                   pending: try list.elements(unified, "pending_renewal_info", path: "unified_receipt"),
                                   times: times)
        // Apple sends a V1 notification at its event and retries for up to three days: the auto-renew state its
        // renewal infos show held at the newest event the receipt shows, not when the backend received it (a
        // change dated in between would otherwise be undone).
        try legacy.translate(into: &list, envelope: envelope, statedAt: envelope.receivedAt, statusAsOfPayload: true)

        let original = Self.subscription(of: body, type: type, in: legacy)
        // The notification's own statement is a unit too: when it cannot be read, the receipt it carries still is.
        switch type {
        case "DID_CHANGE_RENEWAL_STATUS":
            _ = try list.part("auto_renew_status", body["auto_renew_status"]) { list throws(Rejection) -> Bool? in
                guard let original else { throw .invalid("DID_CHANGE_RENEWAL_STATUS without original_transaction_id") }
                guard let on = body["auto_renew_status"]?.bool else {
                    throw .invalid("auto_renew_status of DID_CHANGE_RENEWAL_STATUS is not a boolean")
                }
                let changed = try AppleDate.time(body, "auto_renew_status_change_date", path: "", times: times)
                    ?? envelope.receivedAt
                guard let at = changed ?? list.latestInstant else {
                    throw .invalid("DID_CHANGE_RENEWAL_STATUS without a change date")
                }
                list.add(.renewalStatus(AppleFact.RenewalStatus(subject: original, at: at, autoRenew: on,
                                                                productId: body["auto_renew_product_id"]?.nonEmptyString)))
                return true
            }
        case "DID_FAIL_TO_RENEW":
            _ = try list.part("notification_type", body["notification_type"]) { list throws(Rejection) -> Bool? in
                guard let original else { throw .invalid("DID_FAIL_TO_RENEW without original_transaction_id") }
                var grace: Millis?
                for info in legacy.pendingRenewals where info.value["original_transaction_id"]?.string == original {
                    grace = try AppleDate.time(info.value, "grace_period_expires_date", path: info.path, times: times)
                    break
                }
                guard let at = legacy.latestExpiry[original] ?? envelope.receivedAt ?? list.latestInstant else {
                    throw .invalid("DID_FAIL_TO_RENEW without any date")
                }
                list.add(.billingIssue(AppleFact.BillingIssue(subject: original, at: at, graceEnd: grace, statedBy: type)))
                return true
            }
        case "DID_RECOVER", "RENEWAL":
            // "Successful automatic renewal of an expired subscription that failed to renew in the past" (RENEWAL is
            // its older name): the billing issue stands whether or not its DID_FAIL_TO_RENEW was archived, stated
            // at the recovered period's start, so the episode opens at the end of the one before.
            _ = try list.part("notification_type", body["notification_type"]) { list throws(Rejection) -> Bool? in
                guard let original, let recovered = legacy.latestRenewal[original]?.purchased else { return nil }
                list.add(.billingIssue(AppleFact.BillingIssue(subject: original, at: recovered, statedBy: type)))
                return true
            }
        case "REFUND", "CANCEL":
            // The refund is the `cancellation_date` of the transaction the receipt shows refunded. Its list holds the
            // app's latest 100 transactions only (Apple, forum thread 745367), so the refunded one may be missing:
            // the refund cannot be counted, and is said rather than dropped. A cancellation more than 30 days before
            // the notice (Apple sends it at once and retries for three days; a backend may log it later) is another,
            // older refund. A CANCEL also came for an upgrade before April 2021: an upgrade's cancellation then
            // explains it, and no refund is missing; a REFUND is never about an upgrade.
            let notified = envelope.receivedAt ?? list.latestInstant
            _ = try list.part("notification_type", body["notification_type"]) { _ throws(Rejection) -> Bool? in
                let stated = body["original_transaction_id"]?.nonEmptyString
                let shown = legacy.entries.contains { entry in
                    guard type == "CANCEL" || entry.value["is_upgraded"]?.bool != true,
                          let cancelled = try? AppleDate.time(entry.value, "cancellation_date", path: entry.path, times: times)
                    else { return false }
                    return (stated == nil || entry.value["original_transaction_id"]?.string == stated)
                        && notified.map { cancelled >= $0 - 30 * 86_400_000 } ?? true
                }
                guard shown else {
                    throw .invalid("""
                        \(type) notification whose receipt shows no refunded transaction (no cancellation_date\
                        \(stated.map { " for original_transaction_id \($0)" } ?? "")): its refund is not counted; ingest \
                        that transaction from the App Store Server API (Get Transaction History or Get Refund History)
                        """)
                }
                return true
            }
        default:
            // INITIAL_BUY, DID_RENEW, INTERACTIVE_RENEWAL, REVOKE,
            // PRICE_INCREASE_CONSENT, CONSUMPTION_REQUEST and types unknown to us: the receipt says it all.
            break
        }
        return list.translation(observedAt: envelope.receivedAt ?? list.latestInstant ?? 0)
    }

    /// The subscription (`original_transaction_id`) a V1 notification is about. The body rarely names it: its
    /// unified receipt lists every subscription and one-time product of the user, newest first, so the first
    /// entry may be another subscription or a non-consumable. Else the pending renewal info that renews
    /// `auto_renew_product_id` (for DID_FAIL_TO_RENEW, among those in billing retry when any is), else the
    /// subscription entry of that product, else the receipt's only subscription; `nil` when none decides.
    private static func subscription(of body: JSON, type: String, in legacy: LegacyReceipt) -> String? {
        if let stated = body["original_transaction_id"]?.nonEmptyString { return stated }
        func original(_ value: JSON) -> String? { value["original_transaction_id"]?.nonEmptyString }
        var renewals = legacy.pendingRenewals.map(\.value)
        let retrying = renewals.filter { $0["is_in_billing_retry_period"]?.bool == true }
        if type == "DID_FAIL_TO_RENEW", !retrying.isEmpty { renewals = retrying }
        let product = body["auto_renew_product_id"]?.nonEmptyString
        if let product, let match = renewals.first(where: { $0["auto_renew_product_id"]?.string == product }).flatMap(original) {
            return match
        }
        if Set(renewals.compactMap(original)).count == 1, let only = renewals.first.flatMap(original) { return only }
        if let product, let match = legacy.entries.first(where: {
            $0.value["product_id"]?.string == product && legacy.latestExpiry[original($0.value) ?? ""] != nil
        }).flatMap({ original($0.value) }) {
            return match
        }
        return legacy.latestExpiry.count == 1 ? legacy.latestExpiry.keys.first : nil
    }
}

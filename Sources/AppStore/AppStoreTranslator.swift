import Facts
import Ingest

/// Turns one Apple record (verifyReceipt response, V1 or V2 App Store Server Notification, bare signed
/// transaction or renewal info) into facts (see ``AppleFactKind`` for what each fact says).
///
/// Outcomes: sandbox / Xcode / LocalTesting data and `receipt_type` ProductionSandbox are `.excluded(.sandbox)`,
/// TEST notifications `.excluded(.test)`, non-zero receipt `status` `.excluded(.receiptStatus)`, records whose
/// entries are all family-shared `.excluded(.familyShared)`; a JWS that fails ``JWSVerifier`` is
/// `.quarantined(.badSignature)`, one for another app `.quarantined(.wrongBundle)`, a missing or mistyped required
/// field `.quarantined(.invalidPayload)`. Nothing is thrown and nothing crashes on bad input.
///
/// Nested JWS: the `signedTransactionInfo` and `signedRenewalInfo` inside a verified `signedPayload` are decoded
/// but not verified again. The outer ES256 signature covers their exact bytes, so they are exactly what Apple
/// signed in the notification; splicing a forged inner JWS in would break the outer signature. Verifying them
/// again would triple the signature checks of a V2 ingest and could only reject payloads Apple itself sent.
/// Bare transactions and renewal infos (no outer envelope) are verified like a `signedPayload`.
public struct AppStoreTranslator: Sendable {
    /// Apple Root CA - G3 as DER, the root production App Store signatures chain to.
    public static let appleRootCAG3: [[UInt8]] = [Base64URL.decode(appleRootCAG3Base64) ?? []]

    /// The version of this translator's rules: raised whenever a change makes some payload yield other facts
    /// or another outcome, so that ledgers translated before it are reprocessed (``RulesVersion``).
    public static let rulesVersion: Int64 = 1

    let bundleIds: Set<String>
    let verifier: JWSVerifier

    /// - Parameters:
    ///   - trustedRoots: DER certificates JWS chains must reach (``appleRootCAG3`` in production).
    ///   - bundleIds: accepted `bundleId`s of signed payloads; empty accepts any.
    /// - Throws: ``AppStoreError/unparsableRoot(index:reason:)``.
    public init(trustedRoots: [[UInt8]], bundleIds: Set<String>) throws(AppStoreError) {
        self.verifier = try JWSVerifier(trustedRoots: trustedRoots)
        self.bundleIds = bundleIds
    }

    /// Translates one record whose `source` is one of the `apple.*` kinds.
    public func translate(_ record: ParsedRecord) -> Translation {
        do throws(Rejection) {
            return .used(try facts(of: record))
        } catch {
            switch error {
            case .excluded(let reason): return .excluded(reason)
            case .quarantined(let reason, let detail): return .quarantined(reason, detail: detail)
            }
        }
    }

    private func facts(of record: ParsedRecord) throws(Rejection) -> [Fact] {
        switch (record.source, record.payload) {
        case (.appleVerifyReceipt, .json(let body)):
            return try verifyReceipt(body, envelope: record.envelope)
        case (.appleNotificationV1, .json(let body)):
            return try notificationV1(body, envelope: record.envelope)
        case (.appleNotificationV2, .jws(let text)):
            return try notificationV2(text, envelope: record.envelope, decoded: record.decodedJWS)
        case (.appleNotificationV2, .json(let body)):
            guard let text = body["signedPayload"]?.nonEmptyString else {
                throw .invalid("notification V2 without signedPayload")
            }
            return try notificationV2(text, envelope: record.envelope, decoded: record.decodedJWS)
        case (.appleTransaction, .jws(let text)):
            return try signedTransaction(text, envelope: record.envelope, decoded: record.decodedJWS)
        case (.appleRenewalInfo, .jws(let text)):
            return try signedRenewalInfo(text, envelope: record.envelope, decoded: record.decodedJWS)
        case (.appleTransaction, .json), (.appleRenewalInfo, .json):
            throw .invalid("\(record.source.rawValue) must be a JWS")
        case (.appleVerifyReceipt, .jws), (.appleNotificationV1, .jws):
            throw .invalid("\(record.source.rawValue) must be a JSON object")
        default:
            throw .quarantined(.unrecognized, "\(record.source.rawValue) is not an App Store payload")
        }
    }

    // MARK: verifyReceipt

    private func verifyReceipt(_ body: JSON, envelope: Envelope) throws(Rejection) -> [Fact] {
        guard body.object != nil else { throw .invalid("verifyReceipt response is not an object") }
        guard let status = body["status"]?.int64 else { throw .invalid("verifyReceipt response without numeric status") }
        guard status == 0 else { throw .excluded(.receiptStatus) }
        if body["environment"]?.string == "Sandbox" { throw .excluded(.sandbox) }
        let receipt = body["receipt"]
        if receipt?["receipt_type"]?.string == "ProductionSandbox" { throw .excluded(.sandbox) }

        var inApp = LegacyReceipt.list(receipt?["in_app"])
        // iOS 6 style: the receipt itself is the one transaction.
        if inApp.isEmpty, let receipt, receipt["transaction_id"] != nil { inApp = [receipt] }
        var legacy = LegacyReceipt(inApp: inApp,
                                   latest: LegacyReceipt.list(body["latest_receipt_info"]),
                                   pending: LegacyReceipt.list(body["pending_renewal_info"]))
        let requested = receipt.flatMap { AppleDate.millis($0, "request_date") }
        var list = FactList()
        try legacy.translate(into: &list, envelope: envelope, statedAt: requested ?? envelope.receivedAt)
        return list.finish(observedAt: requested ?? envelope.receivedAt ?? list.latestInstant ?? 0)
    }

    // MARK: V1 notifications

    private func notificationV1(_ body: JSON, envelope: Envelope) throws(Rejection) -> [Fact] {
        guard body.object != nil else { throw .invalid("notification V1 is not an object") }
        guard let type = body["notification_type"]?.nonEmptyString else {
            throw .invalid("notification V1 without notification_type")
        }
        let unified = body["unified_receipt"]
        if body["environment"]?.string == "Sandbox" || unified?["environment"]?.string == "Sandbox" {
            throw .excluded(.sandbox)
        }
        if let status = unified?["status"]?.int64, status != 0 { throw .excluded(.receiptStatus) }

        // Notifications before 2020 had no unified_receipt: the iOS 6-style `latest_receipt_info` object (or,
        // once expired, `latest_expired_receipt_info`) sits at the top level.
        let latest = unified.map { LegacyReceipt.list($0["latest_receipt_info"]) }
            ?? LegacyReceipt.list(body["latest_receipt_info"]) + LegacyReceipt.list(body["latest_expired_receipt_info"])
        var legacy = LegacyReceipt(inApp: [], latest: latest,
                                   pending: LegacyReceipt.list(unified?["pending_renewal_info"]))
        var list = FactList()
        try legacy.translate(into: &list, envelope: envelope, statedAt: envelope.receivedAt)

        let original = body["original_transaction_id"]?.nonEmptyString
            ?? legacy.entries.first?["original_transaction_id"]?.nonEmptyString
        switch type {
        case "DID_CHANGE_RENEWAL_STATUS":
            guard let original else { throw .invalid("DID_CHANGE_RENEWAL_STATUS without original_transaction_id") }
            guard let on = body["auto_renew_status"]?.bool else {
                throw .invalid("DID_CHANGE_RENEWAL_STATUS without a boolean auto_renew_status")
            }
            let changed = AppleDate.millis(body, "auto_renew_status_change_date") ?? envelope.receivedAt
            guard let at = changed ?? list.latestInstant else {
                throw .invalid("DID_CHANGE_RENEWAL_STATUS without a change date")
            }
            list.add(AppleFactKind.renewalStatus, subject: original, at: at,
                     productId: body["auto_renew_product_id"]?.nonEmptyString, flags: on ? .on : [])
        case "DID_FAIL_TO_RENEW":
            guard let original else { throw .invalid("DID_FAIL_TO_RENEW without original_transaction_id") }
            let grace = legacy.pendingRenewals
                .first { $0["original_transaction_id"]?.string == original }
                .flatMap { AppleDate.millis($0, "grace_period_expires_date") }
            guard let at = legacy.latestExpiry[original] ?? envelope.receivedAt ?? list.latestInstant else {
                throw .invalid("DID_FAIL_TO_RENEW without any date")
            }
            list.add(AppleFactKind.billingIssue, subject: original, at: at, detail: type, end: grace)
        default:
            // INITIAL_BUY, DID_RENEW, DID_RECOVER, INTERACTIVE_RENEWAL, CANCEL, REFUND, REVOKE, RENEWAL,
            // PRICE_INCREASE_CONSENT, CONSUMPTION_REQUEST and types unknown to us: the receipt says it all.
            break
        }
        return list.finish(observedAt: envelope.receivedAt ?? list.latestInstant ?? 0)
    }
}

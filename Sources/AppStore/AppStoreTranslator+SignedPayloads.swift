import Facts
import Ingest

/// App Store Server API / Notifications V2: JWS payloads, verified before any fact is taken from them.
extension AppStoreTranslator {
    func notificationV2(_ text: String, envelope: Envelope, decoded: CompactJWS?) throws(Rejection) -> Translation {
        let jws = decoded.flatMap { $0.text == text ? $0 : nil } ?? CompactJWS(text)
        // Notifications V2 sent before Apple added `signedDate` to them (2021 to early 2022) do not say when they
        // were signed: the transaction or renewal info signed with them does.
        var undatedAt: Millis?
        if let jws, jws.payload["signedDate"] == nil { undatedAt = nestedSigningTime(jws) ?? envelope.receivedAt }
        let payload = try verified(text, envelope: envelope, decoded: jws, undatedAt: undatedAt)
        guard let type = payload["notificationType"]?.nonEmptyString else {
            throw .invalid("notification V2 without notificationType")
        }
        let subtype = payload["subtype"]?.nonEmptyString
        var list = FactList()
        // `data`, `summary`, `externalPurchaseToken` and `appData` (RESCIND_CONSENT: the app, no transaction) are
        // mutually exclusive (Apple's responseBodyV2DecodedPayload), and each names the bundle and environment;
        // read leniently, so that a `data` sent as `{}` or `null` is just empty.
        let data = try list.container(payload, "data") ?? payload["summary"] ?? payload["externalPurchaseToken"]
            ?? payload["appData"]
        try checkBundle(data?["bundleId"])
        if type == "TEST" { throw .excluded(.test) }
        try checkEnvironment(data?["environment"])
        switch type {
        case "RENEWAL_EXTENSION", "EXTERNAL_PURCHASE_TOKEN":
            // A summary of a mass renewal extension / an external purchase token: the affected transactions
            // arrive as their own notifications; nothing here is about one subscription.
            return .used([])
        default: break
        }
        guard let signedDate = try millis(payload, "signedDate", path: "") ?? undatedAt else {
            throw .invalid("notification V2 without signedDate, and neither a verified signedTransactionInfo / signedRenewalInfo nor received_at dates it")
        }

        // The transaction, the renewal info and the notification's own statement are units: one that cannot be
        // read is quarantined as a part, the others are used.
        let transactionPath = "data.signedTransactionInfo", renewalPath = "data.signedRenewalInfo"
        let transaction = try list.part(transactionPath, data?["signedTransactionInfo"]) { _ throws(Rejection) -> JSON? in
            try data?["signedTransactionInfo"].map { inner throws(Rejection) in try verifiedInner(inner, what: transactionPath, envelope: envelope) }
        }
        let renewal = try list.part(renewalPath, data?["signedRenewalInfo"]) { _ throws(Rejection) -> JSON? in
            try data?["signedRenewalInfo"].map { inner throws(Rejection) in try verifiedInner(inner, what: renewalPath, envelope: envelope) }
        }
        if let transaction {
            try checkBundle(transaction["bundleId"])
            if transaction["inAppOwnershipType"]?.string == "FAMILY_SHARED" { throw .excluded(.familyShared) }
        }

        var original = renewal?["originalTransactionId"]?.nonEmptyString
        let stated = try transaction.flatMap { transaction throws(Rejection) in
            try list.part(transactionPath, data?["signedTransactionInfo"]) { list throws(Rejection) -> AppleTransaction? in
                let reading: RevocationReading = switch type {
                case "REFUND_REVERSED": .reversed
                case "REFUND", "REVOKE": .refund
                default: .asStated
                }
                let facts = try translateTransaction(transaction, path: transactionPath, envelope: envelope, into: &list,
                                                     revocation: reading)
                if type == "REFUND_REVERSED" {
                    list.add(.refundReversed(AppleFact.RefundReversal(subject: facts.subject, transactionId: facts.purchaseId,
                                                                      at: signedDate, productId: facts.productId)))
                }
                return facts
            }
        }
        if let stated { original = stated.subject }
        let expiry = stated?.expires
        if let renewal {
            // A refund request, a refund or its reversal carries the transaction it is about, often an older one
            // than the subscription's latest: its expiry is no end of the period a renewal info's outcome is at.
            let aboutAnyTransaction = Self.aboutAnyTransaction.contains(type)
            _ = try list.part(renewalPath, data?["signedRenewalInfo"]) { list throws(Rejection) -> Bool? in
                try translateRenewal(renewal, path: renewalPath, expiry: aboutAnyTransaction ? nil : expiry, statedAt: signedDate,
                                     undatedOutcomes: !aboutAnyTransaction, into: &list)
                return true
            }
        }
        if let original {
            _ = try list.part("notificationType", payload["notificationType"]) { list throws(Rejection) -> Bool? in
                try statement(type: type, subtype: subtype, original: original, signedDate: signedDate, expiry: expiry,
                              purchased: stated?.purchased, renewal: renewal, into: &list)
                return true
            }
        }
        return list.translation(observedAt: signedDate)
    }

    /// What the notification type itself says, beside its transaction and renewal info.
    /// `purchased` and `expiry`: the notification's transaction's purchase date and expiry.
    private func statement(type: String, subtype: String?, original: String, signedDate: Millis, expiry: Millis?,
                           purchased: Millis?, renewal: JSON?, into list: inout FactList) throws(Rejection) {
        let noticeAt = expiry ?? signedDate
        switch type {
        case "DID_FAIL_TO_RENEW", "GRACE_PERIOD_EXPIRED":
            let grace = try renewal.flatMap { r throws(Rejection) in
                try millis(r, "gracePeriodExpiresDate", path: "data.signedRenewalInfo")
            }
            list.add(.billingIssue(AppleFact.BillingIssue(subject: original, at: noticeAt, graceEnd: grace, statedBy: type)))
        case "EXPIRED":
            let reason = ExpirationReason(subtype: subtype)
            // The end of billing retry is the notice itself; other expiries happen at the period end.
            let at = reason == .billing ? signedDate : noticeAt
            list.add(.expiry(AppleFact.Expiry(subject: original, at: at, reason: reason, periodEnd: expiry)))
        case "DID_RENEW" where subtype == "BILLING_RECOVERY":
            // A renewal that recovers a billing issue proves the issue, whether or not its DID_FAIL_TO_RENEW was
            // archived: stated at the recovered period's start, the episode opens at the end of the one before.
            if let purchased {
                list.add(.billingIssue(AppleFact.BillingIssue(subject: original, at: purchased, statedBy: "BILLING_RECOVERY")))
            }
        case "DID_CHANGE_RENEWAL_STATUS":
            if subtype == "AUTO_RENEW_ENABLED" || subtype == "AUTO_RENEW_DISABLED" {
                list.add(.renewalStatus(AppleFact.RenewalStatus(subject: original, at: signedDate,
                                                                autoRenew: subtype == "AUTO_RENEW_ENABLED",
                                                                productId: renewal?["autoRenewProductId"]?.nonEmptyString)))
            }
        default:
            // SUBSCRIBED, DID_RENEW (the new period starts at T),
            // DID_CHANGE_RENEWAL_PREF, OFFER_REDEEMED, PRICE_INCREASE, REFUND, REFUND_DECLINED, REVOKE,
            // RENEWAL_EXTENDED, CONSUMPTION_REQUEST, ONE_TIME_CHARGE and unknown types: the transaction and
            // renewal info say it all.
            break
        }
    }

    func signedTransaction(_ text: String, envelope: Envelope, decoded: CompactJWS?) throws(Rejection) -> Translation {
        let transaction = try verified(text, envelope: envelope, decoded: decoded)
        try checkBundle(transaction["bundleId"])
        try checkEnvironment(transaction["environment"])
        if transaction["inAppOwnershipType"]?.string == "FAMILY_SHARED" { throw .excluded(.familyShared) }
        guard let signedDate = try millis(transaction, "signedDate", path: "") else {
            throw .invalid("transaction without signedDate")
        }
        var list = FactList()
        _ = try translateTransaction(transaction, path: "", envelope: envelope, into: &list, revocation: .asStated)
        return list.translation(observedAt: signedDate)
    }

    func signedRenewalInfo(_ text: String, envelope: Envelope, decoded: CompactJWS?) throws(Rejection) -> Translation {
        let renewal = try verified(text, envelope: envelope, decoded: decoded)
        if let bundle = renewal["bundleId"] { try checkBundle(bundle) }
        try checkEnvironment(renewal["environment"])
        guard let signedDate = try millis(renewal, "signedDate", path: "") else {
            throw .invalid("renewal info without signedDate")
        }
        var list = FactList()
        try translateRenewal(renewal, path: "", expiry: nil, statedAt: signedDate, into: &list)
        return list.translation(observedAt: signedDate)
    }

    /// ``AppleDate/signedTime(_:_:path:times:)`` against this run's ``times``.
    func millis(_ object: JSON, _ key: String, path: String) throws(Rejection) -> Millis? {
        try AppleDate.signedTime(object, key, path: path, times: times)
    }

    // MARK: Checks

    /// `decoded`: `text` as the record parser decoded it, if it did (used only when it is that text). `undatedAt`:
    /// when the payload was signed if it states no `signedDate` (else the record's `received_at`), the time its
    /// certificates are checked at.
    func verified(_ text: String, envelope: Envelope, decoded: CompactJWS?, undatedAt: Millis? = nil) throws(Rejection) -> JSON {
        let jws: CompactJWS
        let fallback = undatedAt ?? envelope.receivedAt
        do throws(JWSVerificationError) {
            if let decoded, decoded.text == text {
                try verifier.verify(decoded, unsignedDateFallback: fallback)
                jws = decoded
            } else {
                jws = try verifier.verify(text, unsignedDateFallback: fallback)
            }
        } catch {
            throw .quarantined(.badSignature, error.description)
        }
        guard jws.payload.object != nil else { throw .invalid("JWS payload is not an object") }
        return jws.payload
    }

    /// The `signedDate` of the transaction or renewal info inside a notification (`jws`, itself not verified yet), taken
    /// from the first that verifies on its own: Apple signs them with the notification, so it dates one that
    /// states no `signedDate` of its own.
    private func nestedSigningTime(_ jws: CompactJWS) -> Millis? {
        for key in ["signedTransactionInfo", "signedRenewalInfo"] {
            guard let text = jws.payload["data", key]?.nonEmptyString,
                  let nested = try? verifier.verify(text),
                  let at = try? millis(nested.payload, "signedDate", path: "") else { continue }
            return at
        }
        return nil
    }

    /// The payload of a JWS inside a verified notification (`signedTransactionInfo`, `signedRenewalInfo`), verified in
    /// its turn like any JWS (inputs.md: "Every JWS is verified before use"); one that fails is its part's
    /// quarantine (`bad_signature`), the rest of the notification is used.
    private func verifiedInner(_ value: JSON, what: String, envelope: Envelope) throws(Rejection) -> JSON {
        guard let text = value.nonEmptyString else { throw .invalid("\(what) is not a compact JWS") }
        return try verified(text, envelope: envelope, decoded: nil)
    }

    func checkBundle(_ value: JSON?) throws(Rejection) {
        guard !bundleIds.isEmpty else { return }
        guard let bundle = value?.string else { throw .quarantined(.wrongBundle, "signed payload has no bundleId") }
        guard bundleIds.contains(bundle) else { throw .quarantined(.wrongBundle, "bundleId \(bundle) is not configured") }
    }

    func checkEnvironment(_ value: JSON?) throws(Rejection) {
        switch value?.string {
        case "Sandbox", "Xcode", "LocalTesting": throw .excluded(.sandbox)
        default: return
        }
    }

    // MARK: Payload contents

    /// The facts of a `JWSTransactionDecodedPayload` at `path` in the record (for details).
    func translateTransaction(_ t: JSON, path: String, envelope: Envelope, into list: inout FactList,
                              revocation: RevocationReading) throws(Rejection) -> AppleTransaction {
        let transaction = try AppleTransaction(signed: t, path: path, times: times)
        transaction.facts(into: &list, envelope: envelope, revocation: revocation)
        return transaction
    }

    /// Notification types whose transaction is the one a refund or a refund request is about, not necessarily the
    /// subscription's latest.
    static let aboutAnyTransaction: Set<String> = ["CONSUMPTION_REQUEST", "REFUND", "REFUND_DECLINED", "REFUND_REVERSED", "REVOKE"]

    /// The facts of a `JWSRenewalInfoDecodedPayload` at `path` in the record; `expiry` is the expiry of the
    /// transaction beside it (see ``AppleRenewalInfo/facts(into:expiry:statedAt:undatedOutcomes:)``).
    func translateRenewal(_ r: JSON, path: String, expiry: Millis?, statedAt: Millis, undatedOutcomes: Bool = true,
                          into list: inout FactList) throws(Rejection) {
        try AppleRenewalInfo(signed: r, path: path, times: times).facts(into: &list, expiry: expiry, statedAt: statedAt,
                                                                        undatedOutcomes: undatedOutcomes)
    }
}

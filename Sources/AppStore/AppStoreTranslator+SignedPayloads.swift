import Facts
import Ingest

/// App Store Server API / Notifications V2: JWS payloads, verified before any fact is taken from them.
extension AppStoreTranslator {
    func notificationV2(_ text: String, envelope: Envelope, decoded: CompactJWS?) throws(Rejection) -> [Fact] {
        let payload = try verified(text, envelope: envelope, decoded: decoded)
        guard let type = payload["notificationType"]?.nonEmptyString else {
            throw .invalid("notification V2 without notificationType")
        }
        let subtype = payload["subtype"]?.nonEmptyString
        let data = payload["data"] ?? payload["summary"] ?? payload["externalPurchaseToken"]
        try checkBundle(data?["bundleId"])
        if type == "TEST" { throw .excluded(.test) }
        try checkEnvironment(data?["environment"])
        switch type {
        case "RENEWAL_EXTENSION", "EXTERNAL_PURCHASE_TOKEN":
            // A summary of a mass renewal extension / an external purchase token: the affected transactions
            // arrive as their own notifications; nothing here is about one subscription.
            return []
        default: break
        }
        guard let signedDate = payload["signedDate"]?.int64 else { throw .invalid("notification V2 without signedDate") }

        var transaction: JSON?
        if let inner = data?["signedTransactionInfo"] {
            transaction = try decodeInner(inner, what: "signedTransactionInfo")
        }
        var renewal: JSON?
        if let inner = data?["signedRenewalInfo"] {
            renewal = try decodeInner(inner, what: "signedRenewalInfo")
        }
        if let transaction {
            try checkBundle(transaction["bundleId"])
            if transaction["inAppOwnershipType"]?.string == "FAMILY_SHARED" { throw .excluded(.familyShared) }
        }

        var list = FactList()
        var expiry: Millis?
        var original = renewal?["originalTransactionId"]?.nonEmptyString
        if let transaction {
            let facts = try translateTransaction(transaction, envelope: envelope, into: &list,
                                                 keepRevocation: type != "REFUND_REVERSED")
            expiry = facts.expiry
            original = facts.subject
            if type == "REFUND_REVERSED" {
                list.add(AppleFactKind.refundReversed, subject: facts.subject, at: signedDate, ref: facts.transactionId,
                         productId: facts.productId)
            }
        }
        if let renewal {
            try translateRenewal(renewal, expiry: expiry, statedAt: signedDate, into: &list)
        }
        if let original {
            let noticeAt = expiry ?? signedDate
            let grace = renewal?["gracePeriodExpiresDate"]?.int64
            switch type {
            case "DID_FAIL_TO_RENEW", "GRACE_PERIOD_EXPIRED":
                list.add(AppleFactKind.billingIssue, subject: original, at: noticeAt, detail: type, end: grace)
            case "EXPIRED":
                let reason = ExpirationReason.fromSubtype(subtype)
                // The end of billing retry is the notice itself; other expiries happen at the period end.
                let at = reason == ExpirationReason.billing ? signedDate : noticeAt
                list.add(AppleFactKind.expiry, subject: original, at: at, detail: reason, end: expiry)
            case "DID_CHANGE_RENEWAL_STATUS":
                if subtype == "AUTO_RENEW_ENABLED" || subtype == "AUTO_RENEW_DISABLED" {
                    list.add(AppleFactKind.renewalStatus, subject: original, at: signedDate,
                             productId: renewal?["autoRenewProductId"]?.nonEmptyString,
                             flags: subtype == "AUTO_RENEW_ENABLED" ? .on : [])
                }
            default:
                // SUBSCRIBED, DID_RENEW (BILLING_RECOVERY included: the new period starts at T),
                // DID_CHANGE_RENEWAL_PREF, OFFER_REDEEMED, PRICE_INCREASE, REFUND, REFUND_DECLINED, REVOKE,
                // RENEWAL_EXTENDED, CONSUMPTION_REQUEST, ONE_TIME_CHARGE and unknown types: the transaction and
                // renewal info say it all.
                break
            }
        }
        return list.finish(observedAt: signedDate)
    }

    func signedTransaction(_ text: String, envelope: Envelope, decoded: CompactJWS?) throws(Rejection) -> [Fact] {
        let transaction = try verified(text, envelope: envelope, decoded: decoded)
        try checkBundle(transaction["bundleId"])
        try checkEnvironment(transaction["environment"])
        if transaction["inAppOwnershipType"]?.string == "FAMILY_SHARED" { throw .excluded(.familyShared) }
        guard let signedDate = transaction["signedDate"]?.int64 else { throw .invalid("transaction without signedDate") }
        var list = FactList()
        _ = try translateTransaction(transaction, envelope: envelope, into: &list, keepRevocation: true)
        return list.finish(observedAt: signedDate)
    }

    func signedRenewalInfo(_ text: String, envelope: Envelope, decoded: CompactJWS?) throws(Rejection) -> [Fact] {
        let renewal = try verified(text, envelope: envelope, decoded: decoded)
        if let bundle = renewal["bundleId"] { try checkBundle(bundle) }
        try checkEnvironment(renewal["environment"])
        guard let signedDate = renewal["signedDate"]?.int64 else { throw .invalid("renewal info without signedDate") }
        var list = FactList()
        try translateRenewal(renewal, expiry: nil, statedAt: signedDate, into: &list)
        return list.finish(observedAt: signedDate)
    }

    // MARK: Checks

    /// `decoded`: `text` as the record parser decoded it, if it did (used only when it is that text).
    private func verified(_ text: String, envelope: Envelope, decoded: CompactJWS?) throws(Rejection) -> JSON {
        let jws: CompactJWS
        do throws(JWSVerificationError) {
            if let decoded, decoded.text == text {
                try verifier.verify(decoded, unsignedDateFallback: envelope.receivedAt)
                jws = decoded
            } else {
                jws = try verifier.verify(text, unsignedDateFallback: envelope.receivedAt)
            }
        } catch {
            throw .quarantined(.badSignature, error.description)
        }
        guard jws.payload.object != nil else { throw .invalid("JWS payload is not an object") }
        return jws.payload
    }

    /// Only a JWS's payload matters here: the outer signature already covers these bytes (see the type's notes).
    private func decodeInner(_ value: JSON, what: String) throws(Rejection) -> JSON {
        guard let text = value.nonEmptyString, let jws = CompactJWS(text), jws.payload.object != nil else {
            throw .invalid("\(what) is not a compact JWS with a JSON object payload")
        }
        return jws.payload
    }

    private func checkBundle(_ value: JSON?) throws(Rejection) {
        guard !bundleIds.isEmpty else { return }
        guard let bundle = value?.string else { throw .quarantined(.wrongBundle, "signed payload has no bundleId") }
        guard bundleIds.contains(bundle) else { throw .quarantined(.wrongBundle, "bundleId \(bundle) is not configured") }
    }

    private func checkEnvironment(_ value: JSON?) throws(Rejection) {
        switch value?.string {
        case "Sandbox", "Xcode", "LocalTesting": throw .excluded(.sandbox)
        default: return
        }
    }

    // MARK: Payload contents

    struct TransactionFacts {
        var subject: String
        var transactionId: String
        var productId: String
        /// The period's expiry (`expiresDate`), `nil` for one-time purchases.
        var expiry: Millis?
    }

    /// The facts of a `JWSTransactionDecodedPayload`.
    private func translateTransaction(_ t: JSON, envelope: Envelope, into list: inout FactList,
                                      keepRevocation: Bool) throws(Rejection) -> TransactionFacts {
        guard let transactionId = t["transactionId"]?.nonEmptyString else { throw .invalid("transaction without transactionId") }
        guard let productId = t["productId"]?.nonEmptyString else {
            throw .invalid("transaction \(transactionId) without productId")
        }
        guard let purchased = t["purchaseDate"]?.int64 else {
            throw .invalid("transaction \(transactionId) without numeric purchaseDate")
        }
        let original = t["originalTransactionId"]?.nonEmptyString ?? transactionId
        var price: Int64?
        if let milliunits = t["price"]?.int64 {
            let (micros, overflow) = milliunits.multipliedReportingOverflow(by: 1000)
            guard !overflow else { throw .invalid("transaction \(transactionId) has an out-of-range price") }
            price = micros
        }
        let currency = t["currency"]?.nonEmptyString ?? envelope.currency
        let revoked = t["revocationDate"]?.int64
        let upgraded = t["isUpgraded"]?.bool == true
        let percentage = t["revocationPercentage"]?.int64 ?? 100_000

        if let expiresValue = t["expiresDate"], !expiresValue.isNull {
            guard let expires = expiresValue.int64 else {
                throw .invalid("transaction \(transactionId) has a non-numeric expiresDate")
            }
            var flags: Fact.Flags = []
            if t["offerDiscountType"]?.string == "FREE_TRIAL" { flags.insert(.trial) }
            else if t["offerType"]?.int64 == 1 { flags.insert(.introductory) }
            var end = expires
            if upgraded {
                flags.insert(.upgraded)
                if let revoked { end = min(expires, revoked) }
            }
            list.add(AppleFactKind.period, subject: original, at: purchased, ref: transactionId,
                     detail: t["webOrderLineItemId"]?.nonEmptyString, productId: productId, end: end,
                     amountMicros: price, currency: currency, flags: flags)
            if let revoked, !upgraded, keepRevocation {
                list.add(AppleFactKind.revocation, subject: original, at: revoked, ref: transactionId,
                         detail: String(percentage), productId: productId)
            }
            if let user = t["appAccountToken"]?.nonEmptyString ?? envelope.appUserId {
                list.add(AppleFactKind.user, subject: original, at: purchased, ref: user)
            }
            if let context = envelope.currency {
                list.add(AppleFactKind.currency, subject: original, at: purchased, currency: context)
            }
            return TransactionFacts(subject: original, transactionId: transactionId, productId: productId, expiry: expires)
        }
        list.add(AppleFactKind.oneTime, subject: transactionId, at: purchased, ref: transactionId, productId: productId,
                 amountMicros: price, currency: currency)
        if let revoked, keepRevocation {
            list.add(AppleFactKind.revocation, subject: transactionId, at: revoked, ref: transactionId,
                     detail: String(percentage), productId: productId)
        }
        if let user = t["appAccountToken"]?.nonEmptyString ?? envelope.appUserId {
            list.add(AppleFactKind.user, subject: transactionId, at: purchased, ref: user)
        }
        return TransactionFacts(subject: transactionId, transactionId: transactionId, productId: productId, expiry: nil)
    }

    /// The facts of a `JWSRenewalInfoDecodedPayload`; `expiry` is the expiry of the notification's transaction.
    private func translateRenewal(_ r: JSON, expiry: Millis?, statedAt: Millis,
                                  into list: inout FactList) throws(Rejection) {
        guard let original = r["originalTransactionId"]?.nonEmptyString else {
            throw .invalid("renewal info without originalTransactionId")
        }
        if let status = r["autoRenewStatus"]?.int64 {
            list.add(AppleFactKind.renewalStatus, subject: original, at: statedAt,
                     productId: r["autoRenewProductId"]?.nonEmptyString, flags: status == 1 ? .on : [])
        }
        let noticeAt = expiry ?? statedAt
        let grace = r["gracePeriodExpiresDate"]?.int64
        let intent = r["expirationIntent"]?.nonEmptyString
        if r["isInBillingRetryPeriod"]?.bool == true || grace != nil {
            list.add(AppleFactKind.billingIssue, subject: original, at: noticeAt, detail: "isInBillingRetryPeriod",
                     end: grace)
        } else if intent == "2" {
            list.add(AppleFactKind.billingIssue, subject: original, at: noticeAt, detail: "expirationIntent")
        }
        if let intent, intent != "2" {
            list.add(AppleFactKind.expiry, subject: original, at: noticeAt, detail: ExpirationReason.fromIntent(intent),
                     end: expiry)
        }
    }
}

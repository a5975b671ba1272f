/// What a store translator made of one record: exactly one of the outcomes `inputs.md` counts.
public enum Translation: Sendable, Hashable {
    /// Production data: the facts it states (possibly none, e.g. a Google test notification is excluded instead).
    case used([Fact])
    /// Not production data (sandbox, test purchase, family-shared, non-zero receipt status): counted by reason.
    case excluded(ExclusionReason)
    /// Unusable: kept in the quarantine with the reason and a human-readable detail.
    case quarantined(QuarantineReason, detail: String)
}

/// Why a record is excluded from every metric. Raw values are the keys of `excluded_by_reason`.
public enum ExclusionReason: String, Sendable, Hashable, Codable, CaseIterable {
    /// Apple `environment` Sandbox, Xcode or LocalTesting.
    case sandbox
    /// Google `purchaseType` 0 / `testPurchase`, or an RTDN `testNotification`; Apple TEST notifications.
    case test
    /// Apple family-shared transaction (`in_app_ownership_type` FAMILY_SHARED).
    case familyShared = "family_shared"
    /// A verifyReceipt response whose `status` is not 0.
    case receiptStatus = "receipt_status"
}

/// Why a record is quarantined. Raw values are the keys of `quarantined_by_reason`.
public enum QuarantineReason: String, Sendable, Hashable, Codable, CaseIterable {
    /// Not JSON (garbage line, cut record).
    case malformedJSON = "malformed_json"
    /// JSON of a shape no store sends.
    case unrecognized
    /// A payload the translator cannot use without context the envelope lacks (Google resource without token).
    case missingContext = "missing_context"
    /// A field of the wrong type or a required field missing.
    case invalidPayload = "invalid_payload"
    /// A JWS that failed verification (signature, chain, OIDs, validity, missing `x5c`).
    case badSignature = "bad_signature"
    /// A verified JWS for another app than `--bundle-id`.
    case wrongBundle = "wrong_bundle"
    /// A Google payload for another app than `--package-name`.
    case wrongPackage = "wrong_package"
    /// A JSON string whose bytes are not UTF-8 (or that escapes an unpaired surrogate): read leniently, two
    /// different purchase tokens would become one.
    case invalidUTF8 = "invalid_utf8"
    /// A JSON object that names a member twice: parsers disagree on which one counts.
    case duplicateKey = "duplicate_key"
}

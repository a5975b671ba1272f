/// What a store translator made of one record: exactly one of the outcomes `inputs.md` counts.
public enum Translation: Sendable, Hashable {
    /// Production data: the facts it states (possibly none), and the parts of it that could not be read (one
    /// transaction of a receipt, one line item), each quarantined on its own while the rest is used
    /// (`inputs.md`: "quarantine the smallest unit that cannot").
    case used([Fact], parts: [QuarantinedPart] = [])
    /// Not production data (sandbox, test purchase, family-shared, non-zero receipt status): counted by reason.
    /// `markers` are facts the exclusion states about other records: a Google test purchase states
    /// ``Fact/Kind/testPurchase`` for its token, so that every record of that token is excluded too.
    case excluded(ExclusionReason, markers: [Fact] = [])
    /// Unusable: kept in the quarantine with the reason and a human-readable detail.
    case quarantined(QuarantineReason, detail: String)
}

/// One unusable part of a record that is otherwise used: the quarantine keeps it as its own entry, under the
/// record's provenance, and `warnings.parts_quarantined` counts it (the record itself counts as used once, so
/// `read = used + duplicate + excluded + quarantined` still holds per record).
public struct QuarantinedPart: Sendable, Hashable {
    /// Where the part sits in the payload, as a path of member names and indexes: `latest_receipt_info[2]`,
    /// `unified_receipt.pending_renewal_info[0]`, `lineItems[1]`, `data.signedTransactionInfo`.
    public var path: String
    public var reason: QuarantineReason
    /// What was wrong, naming the field (`latest_receipt_info[2].purchase_date_ms is missing`).
    public var detail: String
    /// The part's JSON text (compact), as kept in the quarantine.
    public var raw: [UInt8]

    public init(path: String, reason: QuarantineReason, detail: String, raw: [UInt8]) {
        self.path = path
        self.reason = reason
        self.detail = detail
        self.raw = raw
    }
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
    /// A time outside ``PlausibleTimes`` (before 2008, or more than ten years after the run's clock).
    case implausibleTimestamp = "implausible_timestamp"
    /// A JSON string whose bytes are not UTF-8 (or that escapes an unpaired surrogate): read leniently, two
    /// different purchase tokens would become one.
    case invalidUTF8 = "invalid_utf8"
    /// A JSON object that names a member twice: parsers disagree on which one counts.
    case duplicateKey = "duplicate_key"
}

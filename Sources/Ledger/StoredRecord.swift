import Facts
import Ingest

/// A record the translators accepted (used) or set aside (excluded), as the `records` table keeps it.
public struct StoredRecord: Sendable, Hashable {
    /// Where a distinct record ended: used for facts, or excluded from every metric with its reason.
    public enum Outcome: Sendable, Hashable {
        case used
        case excluded(ExclusionReason)
    }

    /// `ParsedRecord.dedupKey`: two records with one key are one record.
    public var dedupKey: String
    public var source: SourceKind
    public var outcome: Outcome
    public var provenance: Provenance
    /// The envelope's `received_at` (ms, UTC), when it had one.
    public var receivedAt: Millis?
    /// The record's bytes as read, compressed: what `reprocess` translates again.
    public var payload: CompressedPayload
    /// The rules that made the record's outcome and facts (``RulesVersion``).
    public var rulesVersion: Int64
    /// The bucket of the subject it is about (its first fact's), else of its dedup key (``LedgerBucket``).
    public var bucket: Int

    public init(dedupKey: String, source: SourceKind, outcome: Outcome, provenance: Provenance, receivedAt: Millis?,
                payload: CompressedPayload, rulesVersion: Int64, bucket: Int) {
        self.dedupKey = dedupKey
        self.source = source
        self.outcome = outcome
        self.provenance = provenance
        self.receivedAt = receivedAt
        self.payload = payload
        self.rulesVersion = rulesVersion
        self.bucket = bucket
    }
}

/// Per-source counts of the `records` table, for `status`.
public struct SourceCount: Sendable, Hashable {
    /// `SourceKind` raw value (`apple.notification.v2`, ...).
    public var source: String
    public var used: Int
    public var excluded: Int

    public init(source: String, used: Int, excluded: Int) {
        self.source = source
        self.used = used
        self.excluded = excluded
    }
}

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
    /// The one subject every fact (or marker) of the record is about, `nil` when none or several: what makes
    /// the record count as a test purchase's once its token is marked (``LedgerStore/recordOutcomes(run:)``).
    public var subject: String?
    public var flags: Flags
    /// Unusable parts of a used record (``QuarantineEntry/init(part:record:provenance:payload:rulesVersion:)``).
    public var parts: [QuarantineEntry]
    /// The run (an ingest or a reprocess) that stored it: how a run counts its own records.
    public var run: String

    public init(dedupKey: String, source: SourceKind, outcome: Outcome, provenance: Provenance, receivedAt: Millis?,
                payload: CompressedPayload, rulesVersion: Int64, bucket: Int, subject: String? = nil,
                flags: Flags = [], parts: [QuarantineEntry] = [], run: String) {
        self.dedupKey = dedupKey
        self.source = source
        self.outcome = outcome
        self.provenance = provenance
        self.receivedAt = receivedAt
        self.payload = payload
        self.rulesVersion = rulesVersion
        self.bucket = bucket
        self.subject = subject
        self.flags = flags
        self.parts = parts
        self.run = run
    }

    /// Facts about how a record was read, kept per record (OR-ed over its copies) for `warnings`.
    public struct Flags: OptionSet, Sendable, Hashable {
        public var rawValue: Int64
        public init(rawValue: Int64) { self.rawValue = rawValue }
        /// The envelope's `received_at` was an epoch number in seconds (`warnings.timestamps_in_seconds`).
        public static let receivedAtInSeconds = Flags(rawValue: 1 << 0)
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

/// Where the distinct records ended, as the ledger classifies them now: a record about a token some record showed
/// to be a test purchase counts as excluded (`test`), whatever it was stored as (test status belongs to the
/// token, so the counts do not depend on which record of the token arrived first).
public struct RecordOutcomes: Sendable, Hashable {
    public var used = 0
    public var excludedByReason: [String: Int] = [:]
    /// Per payload source, sorted by source.
    public var bySource: [SourceCount] = []
    /// Records whose `received_at` was in epoch seconds.
    public var receivedInSeconds = 0
    /// Pub/Sub messages whose `messageId` another message has (``LedgerSchema/runMessageIdConflicts``).
    public var messageIdConflicts = 0

    public init() {}

    public var excluded: Int { excludedByReason.values.reduce(0, +) }

    /// Counts `count` records of `source`: used when `excludedFor` is `nil`, else excluded for that reason. The
    /// sources may come in any order and more than once (counts read in parts add up); `bySource` stays sorted
    /// by the sources' bytes, as SQL orders them.
    mutating func add(source: String, excludedFor reason: String?, count: Int) {
        let index: Int
        if let found = bySource.firstIndex(where: { $0.source == source }) {
            index = found
        } else {
            index = bySource.firstIndex { source.utf8.lexicographicallyPrecedes($0.source.utf8) } ?? bySource.endIndex
            bySource.insert(SourceCount(source: source, used: 0, excluded: 0), at: index)
        }
        if let reason {
            excludedByReason[reason, default: 0] += count
            bySource[index].excluded += count
        } else {
            used += count
            bySource[index].used += count
        }
    }
}

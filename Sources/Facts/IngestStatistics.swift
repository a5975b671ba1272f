/// What an ingest did with its input (`cli.md`: `ingest --json`, `status --json`, `summary.json`'s `ingest`).
///
/// Invariant: `read == used + duplicate + excluded + quarantined`, and the by-reason counts add up to their totals.
public struct IngestStatistics: Sendable, Hashable, Codable {
    /// Input files (archives) read (for `status`: known to the ledger).
    public var files: Int
    public var read: Int
    public var used: Int
    public var duplicate: Int
    public var excluded: Int
    public var quarantined: Int
    /// Keys are `ExclusionReason` raw values.
    public var excludedByReason: [String: Int]
    /// Keys are `QuarantineReason` raw values.
    public var quarantinedByReason: [String: Int]
    public var damagedFiles: [Damaged]
    /// Files found that are not inputs (`inputs.md`: neither JSON, gzip, tar nor zip; FIFOs, sockets, links that
    /// lead nowhere): none of their bytes was read. For `status`: the latest reason for each such path.
    public var skippedFiles: [Skipped]
    /// Earliest and latest event time (ms, UTC) of the facts stored; `nil` when there are none.
    public var firstEventAt: Millis?
    public var lastEventAt: Millis?
    /// Things read correctly that the user should still know about, by name (keys are ``IngestWarning`` raw
    /// values; every name is present, zeros included, once ``withEveryWarning()`` filled them).
    public var warnings: [String: Int]

    public init(files: Int = 0, read: Int = 0, used: Int = 0, duplicate: Int = 0, excluded: Int = 0,
                quarantined: Int = 0, excludedByReason: [String: Int] = [:], quarantinedByReason: [String: Int] = [:],
                damagedFiles: [Damaged] = [], skippedFiles: [Skipped] = [], firstEventAt: Millis? = nil,
                lastEventAt: Millis? = nil, warnings: [String: Int] = [:]) {
        self.files = files
        self.read = read
        self.used = used
        self.duplicate = duplicate
        self.excluded = excluded
        self.quarantined = quarantined
        self.excludedByReason = excludedByReason
        self.quarantinedByReason = quarantinedByReason
        self.damagedFiles = damagedFiles
        self.skippedFiles = skippedFiles
        self.firstEventAt = firstEventAt
        self.lastEventAt = lastEventAt
        self.warnings = warnings
    }

    /// The count of one warning (0 when absent).
    public subscript(warning: IngestWarning) -> Int {
        get { warnings[warning.rawValue] ?? 0 }
        set { warnings[warning.rawValue] = newValue }
    }

    /// These statistics with every ``IngestWarning`` named, zeros included: what the JSON outputs print, so that
    /// a script can read any warning without checking that it is there.
    public func withEveryWarning() -> IngestStatistics {
        var copy = self
        for warning in IngestWarning.allCases where copy.warnings[warning.rawValue] == nil {
            copy.warnings[warning.rawValue] = 0
        }
        return copy
    }

    /// A damaged input file: everything before `offset` was read.
    public struct Damaged: Sendable, Hashable, Codable {
        public var file: String
        public var offset: Int64
        public var reason: String

        public init(file: String, offset: Int64, reason: String) {
            self.file = file
            self.offset = offset
            self.reason = reason
        }
    }

    /// A file that was found but not read, and why (`cli.md`: `skipped_files`).
    public struct Skipped: Sendable, Hashable, Codable {
        public var file: String
        public var reason: String

        public init(file: String, reason: String) {
            self.file = file
            self.reason = reason
        }
    }
}

/// A warning of `warnings` (`cli.md`): input that was read, but not as it was written or not whole. Raw values are
/// the JSON keys; each non-zero count is also said in a sentence on stderr (``sentence(_:)``).
public enum IngestWarning: String, Sendable, Hashable, CaseIterable {
    /// Records whose envelope `received_at` was an epoch number below 10^11, read as seconds (not milliseconds).
    case timestampsInSeconds = "timestamps_in_seconds"
    /// Pub/Sub messages that share a `messageId` with another message of different data (both used): one per
    /// message beyond the first of each id.
    case messageIdConflicts = "message_id_conflicts"
    /// Unusable parts of used records (a receipt's transaction, a line item), each quarantined on its own.
    case partsQuarantined = "parts_quarantined"

    /// The `warnings` object (`cli.md`) of these counts, every key present.
    public static func counts(timestampsInSeconds: Int, messageIdConflicts: Int, partsQuarantined: Int) -> [String: Int] {
        [
            Self.timestampsInSeconds.rawValue: timestampsInSeconds,
            Self.messageIdConflicts.rawValue: messageIdConflicts,
            Self.partsQuarantined.rawValue: partsQuarantined,
        ]
    }

    /// One sentence for stderr saying what `count` of these means (a warning's message: the log handler marks it).
    public func sentence(_ count: Int) -> String {
        switch self {
        case .timestampsInSeconds:
            return "\(count) records had received_at in epoch seconds (a number below 10^11); they were read as seconds, not milliseconds"
        case .messageIdConflicts:
            return "\(count) Pub/Sub messages reuse the messageId of another message with different data (merged exports?); both were used"
        case .partsQuarantined:
            return "\(count) unusable parts of otherwise used records were quarantined on their own (see `subledger quarantine`)"
        }
    }
}

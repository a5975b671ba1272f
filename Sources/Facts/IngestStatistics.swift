/// What an ingest did with its input (`cli.md`: `ingest --json`, `status --json`, `summary.json`'s `ingest`).
///
/// Invariant: `read == used + duplicate + excluded + quarantined`, and the by-reason counts add up to their totals.
public struct IngestStatistics: Sendable, Hashable {
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

    public init(files: Int = 0, read: Int = 0, used: Int = 0, duplicate: Int = 0, excluded: Int = 0,
                quarantined: Int = 0, excludedByReason: [String: Int] = [:], quarantinedByReason: [String: Int] = [:],
                damagedFiles: [Damaged] = [], skippedFiles: [Skipped] = [], firstEventAt: Millis? = nil, lastEventAt: Millis? = nil) {
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
    }

    /// A damaged input file: everything before `offset` was read.
    public struct Damaged: Sendable, Hashable {
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
    public struct Skipped: Sendable, Hashable {
        public var file: String
        public var reason: String

        public init(file: String, reason: String) {
            self.file = file
            self.reason = reason
        }
    }
}

import Facts
import Ingest

/// What one read of an input file did with its records. Invariant:
/// `read == used + duplicate + excluded + quarantined`.
public struct FileCounts: Sendable, Hashable {
    public var read = 0
    public var used = 0
    public var duplicate = 0
    public var excluded = 0
    public var quarantined = 0

    public init(read: Int = 0, used: Int = 0, duplicate: Int = 0, excluded: Int = 0, quarantined: Int = 0) {
        self.read = read
        self.used = used
        self.duplicate = duplicate
        self.excluded = excluded
        self.quarantined = quarantined
    }
}

/// One row of the file manifest, as `status` lists it.
public struct FileManifestEntry: Sendable, Hashable {
    /// Where a file stands: being read (or interrupted while being read), or read to its end.
    public enum State: String, Sendable, Hashable {
        /// A run started reading the file and did not finish it (killed); the next run reads it again.
        case reading
        /// Read to the end (possibly damaged: see ``damage``); skipped while its fingerprint is unchanged.
        case done
    }

    public var fingerprint: FileFingerprint
    public var state: State
    /// Counts of the latest complete read (while ``State/reading``: read counts of the largest prefix committed).
    public var counts: FileCounts
    /// Where reading stopped in a damaged container, and why.
    public var damage: Damage?
    /// When the latest read started or finished (ms, UTC).
    public var ingestedAt: Millis

    public init(fingerprint: FileFingerprint, state: State, counts: FileCounts, damage: Damage?, ingestedAt: Millis) {
        self.fingerprint = fingerprint
        self.state = state
        self.counts = counts
        self.damage = damage
        self.ingestedAt = ingestedAt
    }
}

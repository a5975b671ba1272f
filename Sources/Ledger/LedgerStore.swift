import Facts
import Ingest

/// The ledger: the one interface the pipeline writes and reads through (ledger.md, "One interface, two engines").
/// ``SQLiteLedger`` implements it; nothing outside this module names an engine.
///
/// Writing: a writer takes ``lockForWriting(_:timeout:)`` for the whole run, then writes records in explicit
/// transactions (``beginTransaction()`` / ``commitTransaction()``): ingest commits every so many records and
/// marks a file `done` in the same transaction as its last records, which is what makes a killed ingest safe to
/// re-run. Instants are ms UTC throughout.
///
/// Not `Sendable`: a ledger is a connection, used by one thread. The reader thread of ingest gets its own
/// objects for what it needs (``fileClaimer()``, ``queueReader()``).
public protocol LedgerStore: AnyObject {
    /// Where the ledger lives, for messages (a path, or a URL without its password).
    var location: String { get }

    // MARK: standing

    /// The ledger's identity and how its facts stand against `rulesVersion` (the running program's rules).
    func standing(rulesVersion: Int64) throws(LedgerError) -> LedgerStanding

    // MARK: writing

    /// The right to write, held for a whole ingest or reprocess, after which the schema is up to date: `shared`
    /// for an ingest (a server ledger lets several ingests write at once; an embedded one takes one writer at a
    /// time whatever the mode), `exclusive` for a reprocess. Waits up to `timeout` for other writers.
    func lockForWriting(_ mode: LedgerLockMode, timeout: Duration) throws(LedgerError) -> any LedgerLock
    func beginTransaction() throws(LedgerError)
    func commitTransaction() throws(LedgerError)
    /// Abandons the open transaction, if any; never throws (used on the failure path).
    func rollbackTransaction()

    // MARK: file manifest

    /// What the reader thread asks before it reads a file: read it, or skip it as unchanged or as a copy.
    func fileClaimer() throws(LedgerError) -> any FileClaimer
    /// Marks the file `reading` (a new or changed file); its previous counts stay until ``finishFile``.
    func beginFile(_ file: FileFingerprint) throws(LedgerError)
    /// Records that `read` records of the file's current read are about to be committed.
    func saveProgress(path: String, read: Int) throws(LedgerError)
    /// Marks the file `done` with the counts and the (first) damage of this read.
    func finishFile(_ file: FileFingerprint, counts: FileCounts, damage: Damage?) throws(LedgerError)
    /// Every manifest row, by path.
    func files() throws(LedgerError) -> [FileManifestEntry]
    /// Records that a file found among the inputs is not one (``IngestStatistics/skippedFiles``); a later
    /// ``beginFile(_:)`` of the same path forgets it.
    func skipFile(_ skipped: IngestStatistics.Skipped) throws(LedgerError)

    // MARK: payloads

    /// The zstd dictionaries payloads are compressed with, oldest first.
    func payloadDictionaries() throws(LedgerError) -> [PayloadDictionary]
    /// Stores a new dictionary (inside the open transaction) and returns the ledger's newest: this one, or one
    /// another writer sharing the ledger stored at the same moment.
    func addPayloadDictionary(_ bytes: [UInt8]) throws(LedgerError) -> PayloadDictionary

    // MARK: records

    /// Writes `writes` in order inside the open transaction, and removes `dequeued` from the reprocess queue in
    /// the same transaction. Returns, for each write, whether it was new: `false` for a record whose dedup key was
    /// stored before (its row then keeps the smaller provenance and the copy received first, and its facts are
    /// still merged, so that the earliest `observedAt` wins whichever copy came first), or for a quarantined
    /// record already quarantined from that very place.
    func write(_ writes: [LedgerWrite], dequeuing dequeued: [QueuedRecord.ID]) throws(LedgerError) -> [Bool]
    /// How many records a transaction should hold: an embedded ledger writes fastest in large transactions, a
    /// server shared by several writers in small ones.
    var recordsPerTransaction: Int { get }

    // MARK: reprocess

    /// Moves what `scope` covers onto the reprocess queue in one transaction (a full reprocess also deletes
    /// every fact, to be rebuilt), unless a reprocess is under way already, which is then resumed (a full one
    /// asked for during a quarantine-only one takes the rest too). Rows without a payload (ledgers of the
    /// release before payloads were kept) are not queued: their files are set back to `reading`, to be read
    /// again from their archives. Returns the paths of those files.
    func queueForReprocess(_ scope: ReprocessScope) throws(LedgerError) -> [String]
    /// A reader of the queue in its engine's order (``ReprocessQueueReader``), for the reader thread.
    func queueReader() -> any ReprocessQueueReader
    /// Ends a reprocess (the queue is empty): every record's facts are now those of `rulesVersion`.
    func finishReprocess(rulesVersion: Int64) throws(LedgerError)
    /// A file of the manifest that a reprocess could not read again (gone, or changed): kept `reading` with
    /// no counts and `reason` as its damage, so that `status` names it and the next ingest of it reads it.
    func markUnreadable(path: String, reason: String) throws(LedgerError)
    /// The manifest's files left `reading`: reads a run did not finish, or files ``queueForReprocess(_:)`` set
    /// back to be read again.
    func filesToReread() throws(LedgerError) -> [FileFingerprint]
    /// Records that an ingest into a ledger without facts of older rules wrote everything with `rulesVersion`.
    func setRulesVersion(_ rulesVersion: Int64) throws(LedgerError)

    // MARK: reading

    /// Everything ingested so far (`status`). See ``SQLiteLedger/statistics(readingEventRange:)`` for how the
    /// counts are derived. Without `readingEventRange`, `firstEventAt` and `lastEventAt` stay `nil` and the facts
    /// are not read (a report reads the range on its own, for the as-of, beside these statistics).
    func statistics(readingEventRange: Bool) throws(LedgerError) -> IngestStatistics
    /// The facts' event range as ``statistics()`` reports it (`firstEventAt`, `lastEventAt`; ms, UTC), alone:
    /// one scan of the facts, where the statistics also read every record.
    func eventRange() throws(LedgerError) -> (first: Millis?, last: Millis?)
    /// Used and excluded record counts by payload source (test purchases' records counted as excluded).
    func countsBySource() throws(LedgerError) -> [SourceCount]
    /// Where the records a run stored ended (every record when `run` is `nil`), classified as ``statistics()``
    /// does: a test purchase's records as excluded, whichever arrived first. This is how an ingest reports where
    /// its own records ended.
    func recordOutcomes(run: String?) throws(LedgerError) -> RecordOutcomes
    /// How many records had `received_at` in epoch seconds (any copy of them) and how many parts of used records
    /// are quarantined, read through partial indexes: an ingest takes them before and after to say what it
    /// added, without scanning the ledger (other ingests writing at the same time count in too).
    func warningCounts() throws(LedgerError) -> (receivedInSeconds: Int, partsQuarantined: Int)
    /// Quarantined records in provenance order, optionally of one reason (a `QuarantineReason` raw value).
    func forEachQuarantined(reason: String?, _ body: (QuarantinedRecord) throws -> Void) throws
    /// The quarantined records of plain files whose JSON was malformed, with the file's version last read
    /// (``QuarantinedTail``): what an ingest checks a file it reads again against.
    func quarantinedTails() throws(LedgerError) -> [QuarantinedTail]
    /// Removes these quarantined records (and their places on the reprocess queue), inside the open transaction:
    /// tails a record read since has completed.
    func forgetQuarantined(keys: [String]) throws(LedgerError)
    /// Streams the subscriptions of the ranges of buckets (``LedgerBucket``) `nextRange` hands out, one range after
    /// another until it gives `nil`: each subscription once, with all its facts, Google chains
    /// (``Fact/Kind/link``) joined under the chain's first subject, whose bucket decides the slice the chain
    /// belongs to. Within a group facts are sorted by (at, kind, observedAt, ref, then every other column).
    /// Subscriptions come in no particular order; only the current one is held in memory. Ranges asked of one
    /// call share its reading of the chains, so threads that take ranges from one list as they get free
    /// (``ReportSlices``) pay for it once each.
    func forEachSubscription(inRanges nextRange: () -> ClosedRange<Int>?,
                             _ body: (_ platform: Platform, _ id: String, _ facts: [Fact]) throws -> Void) throws
    /// The records a reference names: a dedup key, or a place (`FILE:POSITION`, `FILE[MEMBER]:POSITION`) where
    /// a record was first read; each with its payload and the facts it stated first.
    func records(matching reference: String) throws(LedgerError) -> [RecordDetail]
    /// The facts of one subject (Apple `original_transaction_id`, Google purchase token), each naming the record
    /// that stated it first.
    func facts(ofSubject subject: String) throws(LedgerError) -> [AttributedFact]
    // MARK: checks

    /// A fast structural check, run before ingest and report use the ledger; throws
    /// ``LedgerError/Kind/damaged`` (with how to recover) when it fails.
    func quickCheck() throws(LedgerError)
    /// The full check of `status --verify`: the store's own consistency and the ledger's invariants;
    /// `sources` are the payload kinds the stores of this build read (a record of another is a problem).
    /// - Returns: the problems found, each a sentence; empty for a sound ledger.
    func verify(sources: Set<SourceKind>) throws(LedgerError) -> [String]

    /// Hex SHA-256 of the ledger's logical content (records, facts, quarantine), without ingest times or
    /// payload bytes: two ledgers with equal digests hold the same data.
    func contentDigest() throws(LedgerError) -> String
}

/// One record as the pipeline hands it to the ledger.
public enum LedgerWrite: Sendable {
    /// A used or excluded record and the facts it states.
    case record(StoredRecord, [KeyedFact])
    /// A record that could not be used.
    case quarantine(QuarantineEntry)
}

/// How a writer shares the ledger.
public enum LedgerLockMode: Sendable, Hashable {
    /// Alongside other shared writers (ingest).
    case shared
    /// Alone (reprocess, which rewrites what other writers would read).
    case exclusive
}

/// The right to write a ledger; released on ``release()``, on deinit, and by the system when the process dies.
public protocol LedgerLock: AnyObject {
    func release()
}

/// The ledger's identity and the state of its facts.
public struct LedgerStanding: Sendable, Hashable {
    /// A random id given to the ledger when it was created.
    public var ledgerId: String
    /// The rules every record's facts were made by; `nil` for a ledger that holds no record yet.
    public var rulesVersion: Int64?
    /// A reprocess under way (killed, or running now).
    public var reprocess: ReprocessScope?
    /// Schema steps this program would apply (a ledger opened read-only is not migrated).
    public var pendingMigrations: [String]
    /// Whether any record lacks its payload (a ledger from the release before payloads were kept).
    public var recordsWithoutPayload: Bool
    /// Whether the ledger holds no record and no quarantined record.
    public var isEmpty: Bool

    public init(ledgerId: String, rulesVersion: Int64?, reprocess: ReprocessScope?, pendingMigrations: [String],
                recordsWithoutPayload: Bool, isEmpty: Bool) {
        self.ledgerId = ledgerId
        self.rulesVersion = rulesVersion
        self.reprocess = reprocess
        self.pendingMigrations = pendingMigrations
        self.recordsWithoutPayload = recordsWithoutPayload
        self.isEmpty = isEmpty
    }

    /// Whether the ledger must be reprocessed before reports read it with `rulesVersion`: schema steps to apply,
    /// a reprocess under way, records without payload, or facts of other rules.
    public func isStale(for rulesVersion: Int64) -> Bool {
        !pendingMigrations.isEmpty || reprocess != nil || recordsWithoutPayload
            || (!isEmpty && self.rulesVersion != rulesVersion)
    }
}

/// What a reprocess covers.
public enum ReprocessScope: String, Sendable, Hashable {
    /// Every record and every quarantined record: all facts are rebuilt.
    case full
    /// Only quarantined records (e.g. after fixing `--apple-root-ca`); the facts of used records stay.
    case quarantined
}

/// What the reader thread does with a file it is about to read.
public enum FileClaim: Sendable, Hashable {
    /// Read it.
    case read
    /// The ledger has this path with these bytes `done`: nothing to read.
    case unchanged
    /// The same bytes (SHA-256) were read under another path, named here: not read again.
    case copy(of: String)
    /// Another process sharing the ledger is reading it now: ask again later (it may die and leave it).
    case claimedElsewhere
}

/// Decides, file by file on the reader thread, whether to read it (see ``FileClaim``). One per run.
public protocol FileClaimer: AnyObject, Sendable {
    func claim(_ file: FileFingerprint) -> FileClaim
}

/// A record waiting on the reprocess queue: its place and its payload (the copy received first, whose own
/// `received_at` dates its facts).
public struct QueuedRecord: Sendable {
    /// Which table it came from and its key there.
    public struct ID: Sendable, Hashable {
        public enum Origin: String, Sendable, Hashable {
            case record
            case quarantine
        }

        public var origin: Origin
        public var key: String

        public init(origin: Origin, key: String) {
            self.origin = origin
            self.key = key
        }
    }

    public var id: ID
    public var provenance: Provenance
    public var payload: CompressedPayload

    public init(id: ID, provenance: Provenance, payload: CompressedPayload) {
        self.id = id
        self.provenance = provenance
        self.payload = payload
    }
}

/// Reads the reprocess queue a page at a time, on the reader thread, in a fixed order: on SQLite the order the
/// records were stored in, on PostgreSQL provenance order. Any order gives the same ledger.
public protocol ReprocessQueueReader: AnyObject, Sendable {
    /// The next (at most `limit`) queued records: a new reader starts at the beginning of the queue, and each call
    /// goes on where the one before ended. Shorter than `limit` only at the end.
    func nextPage(limit: Int) throws(LedgerError) -> [QueuedRecord]
}

extension LedgerStore {
    /// ``statistics(readingEventRange:)`` with the facts' event range.
    public func statistics() throws(LedgerError) -> IngestStatistics { try statistics(readingEventRange: true) }

    /// ``forEachSubscription(inRanges:_:)`` of one range of buckets.
    public func forEachSubscription(buckets: ClosedRange<Int>,
                                    _ body: (_ platform: Platform, _ id: String, _ facts: [Fact]) throws -> Void) throws {
        var pending: ClosedRange<Int>? = buckets
        try forEachSubscription(inRanges: { defer { pending = nil }; return pending }, body)
    }
}

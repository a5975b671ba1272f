import Facts
import Ingest

/// The ledger: what ingest writes and what reports read. ``SQLiteLedger`` implements it; the protocol is the
/// seam for a PostgreSQL ledger later.
///
/// Writes happen inside explicit transactions (``beginTransaction()`` / ``commitTransaction()``): ingest
/// commits every few thousand records and at the end of each file, and marks a file `done` in the same
/// transaction as its last records, which is what makes a killed ingest safe to re-run.
/// Instants are ms UTC throughout.
public protocol LedgerStore {
    // MARK: transactions

    func beginTransaction() throws(LedgerError)
    func commitTransaction() throws(LedgerError)
    /// Abandons the open transaction, if any; never throws (used on the failure path).
    func rollbackTransaction()

    // MARK: file manifest

    /// `true` when a `done` row has this path, size and SHA-256: the file was read completely already.
    func isDone(_ file: FileFingerprint) throws(LedgerError) -> Bool
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

    // MARK: records

    /// Stores a used or excluded record and the facts it states. Returns `false` when a record with its dedup
    /// key was stored before (a duplicate): the row then keeps the smaller provenance, and the facts are still
    /// merged, so that the earliest `observedAt` wins whichever copy came first.
    func store(_ record: StoredRecord, keyedFacts: [KeyedFact]) throws(LedgerError) -> Bool
    /// Quarantines a record; `false` when that exact record from that file was quarantined before.
    func quarantine(_ entry: QuarantineEntry) throws(LedgerError) -> Bool

    // MARK: reading

    /// Everything ingested so far (`status`). See ``SQLiteLedger/statistics()`` for how the counts are derived.
    func statistics() throws(LedgerError) -> IngestStatistics
    /// Used and excluded record counts by payload source.
    func countsBySource() throws(LedgerError) -> [SourceCount]
    /// Quarantined records in provenance order, optionally of one reason (a `QuarantineReason` raw value).
    func forEachQuarantined(reason: String?, _ body: (QuarantineEntry) throws -> Void) throws
    /// Streams every subscription: facts grouped by (platform, subscription id), in that order, with Google
    /// chains (``Fact/Kind/link``) joined under the chain's first subject. Within a group facts are sorted by
    /// (at, kind, observedAt, ref). Only the current group is held in memory.
    func forEachSubscription(_ body: (_ platform: Platform, _ id: String, _ facts: [Fact]) throws -> Void) throws
    // MARK: checks

    /// A fast structural check, run before ingest and report use the ledger; throws
    /// ``LedgerError/Kind/damaged`` (with how to recover) when it fails.
    func quickCheck() throws(LedgerError)
    /// The full check of `status --verify`: the store's own consistency and the ledger's invariants.
    /// - Returns: the problems found, each a sentence; empty for a sound ledger.
    func verify() throws(LedgerError) -> [String]

    /// Hex SHA-256 of the ledger's logical content (records, facts, quarantine), without ingest times or
    /// provenance-independent details: two ledgers with equal digests hold the same data.
    func contentDigest() throws(LedgerError) -> String
}

extension LedgerStore {
    /// ``store(_:keyedFacts:)`` computing the facts' keys here.
    public func store(_ record: StoredRecord, facts: [Fact]) throws(LedgerError) -> Bool {
        try store(record, keyedFacts: facts.map(KeyedFact.init))
    }
}

/// A failure of the ledger database, with the context needed to act on it.
public struct LedgerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, for the CLI to choose its exit code.
    public enum Kind: Sendable, Hashable {
        /// The database file does not exist (read-only open of a ledger that was never written).
        case notFound
        /// Another process holds the ingest lock and did not release it within the wait bound.
        case busy
        /// SQLite reported an error (`code` is the extended result code).
        case sqlite(code: Int32)
        /// An input file could not be read for fingerprinting.
        case unreadableFile
        /// Not a ledger this version reads: another application's database, or a ledger of another schema
        /// version, or a value this version cannot read (a usage error: exit 2).
        case corrupt
        /// The database is not a subledger ledger (`--db` names some other database); it was not changed.
        case foreign
        /// The ledger was written by a later version of subledger (or one too old to upgrade): refused as it is.
        case newerLedger
        /// The ledger must be upgraded before it is read: schema steps to apply, or facts made by older rules
        /// (`subledger reprocess`, or an ingest, does it).
        case needsReprocess
        /// The database server cannot be reached, or went away during the work (a re-run completes it).
        case unavailable
        /// The database server refused a statement (`state` is its SQLSTATE code).
        case server(state: String)
        /// The ledger file is damaged (SQLite finds broken pages): nothing can be trusted from it until it is
        /// restored or rebuilt (exit 3); the message says how.
        case damaged
    }

    public var kind: Kind
    /// The database or file path the failure concerns.
    public var path: String
    /// What went wrong, in words a user can act on.
    public var message: String
    /// What a maintainer needs besides the message: the statement that failed, the engine's own words. Never part
    /// of ``message`` or ``description`` (users are not shown SQL); the CLI logs it at debug level.
    public var detail: String?

    public init(kind: Kind, path: String, message: String, detail: String? = nil) {
        self.kind = kind
        self.path = path
        self.message = message
        self.detail = detail
    }

    public var description: String { "\(path): \(message)" }
}

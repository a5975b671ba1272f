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
        /// The ledger file is damaged (SQLite finds broken pages): nothing can be trusted from it until it is
        /// restored or rebuilt (exit 3); the message says how.
        case damaged
    }

    public var kind: Kind
    /// The database or file path the failure concerns.
    public var path: String
    /// What went wrong, in words a user can act on.
    public var message: String

    public init(kind: Kind, path: String, message: String) {
        self.kind = kind
        self.path = path
        self.message = message
    }

    public var description: String { "\(path): \(message)" }
}

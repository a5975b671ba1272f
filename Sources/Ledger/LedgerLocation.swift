/// Where a ledger lives, as `--db` (or `$SUBLEDGER_DB`) names it: the one place that picks an engine.
public enum LedgerLocation: Sendable, Hashable, CustomStringConvertible {
    /// An embedded SQLite ledger: one file.
    case sqlite(path: String)

    /// The location `--db` names.
    public init(_ text: String) {
        self = .sqlite(path: text)
    }

    public var description: String {
        switch self {
        case .sqlite(let path): path
        }
    }

    /// Opens the ledger. ``LedgerAccess/readWrite`` creates an SQLite file when missing; the schema is brought up
    /// to date by ``LedgerStore/lockForWriting(timeout:)``.
    public func open(_ access: LedgerAccess) throws(LedgerError) -> any LedgerStore {
        switch self {
        case .sqlite(let path): try SQLiteLedger(path: path, access: access)
        }
    }
}

/// How a command uses the ledger: `report`, `status` and `quarantine` only read.
public enum LedgerAccess: Sendable {
    /// Writes (ingest, reprocess); the ledger is created when missing.
    case readWrite
    /// Reads an existing ledger without writing to it, also in a read-only folder and while an ingest writes; a
    /// missing ledger throws ``LedgerError/Kind/notFound``, one with schema steps to apply
    /// ``LedgerError/Kind/needsReprocess``.
    case readOnly
}

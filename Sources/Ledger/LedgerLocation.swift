/// Where a ledger lives, as `--db` (or `$SUBLEDGER_DB`) names it: the one place that picks an engine.
public enum LedgerLocation: Sendable, Hashable, CustomStringConvertible {
    /// An embedded SQLite ledger: one file.
    case sqlite(path: String)
    /// A PostgreSQL ledger, shared by many processes on many machines.
    case postgres(PostgresLocation)

    /// The location `--db` names: a `postgres://` or `postgresql://` URL, else an SQLite file path.
    /// `environment` supplies `PGPASSWORD` where the URL has no password.
    public init(_ text: String, environment: [String: String] = [:]) {
        if let postgres = PostgresLocation(text, environment: environment) {
            self = .postgres(postgres)
        } else {
            self = .sqlite(path: text)
        }
    }

    public var description: String {
        switch self {
        case .sqlite(let path): path
        case .postgres(let location): location.description
        }
    }

    /// Opens the ledger. ``LedgerAccess/readWrite`` creates an SQLite file when missing; the schema is brought up
    /// to date by ``LedgerStore/lockForWriting(_:timeout:)``.
    public func open(_ access: LedgerAccess) throws(LedgerError) -> any LedgerStore {
        switch self {
        case .sqlite(let path): try SQLiteLedger(path: path, access: access)
        case .postgres(let location): try PostgresLedger(location, access: access)
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

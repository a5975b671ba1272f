import Foundation

/// What a migrator needs of a database connection: both engines provide it.
protocol SchemaConnection {
    var dialect: SQLDialect { get }
    /// Where the ledger lives, for messages (a path, or a URL without its password).
    var databaseName: String { get }
    func execute(_ sql: String) throws(LedgerError)
    /// The names of the tables of the ledger's schema (SQLite: `main`; PostgreSQL: the current schema).
    func tableNames() throws(LedgerError) -> Set<String>
    /// The rows of a one-column text query.
    func strings(_ sql: String) throws(LedgerError) -> [String]
    /// SQLite's `PRAGMA user_version`, where the release before migrations kept its schema version; `nil` on
    /// engines without it.
    func legacySchemaVersion() throws(LedgerError) -> Int64?
}

/// Brings a ledger's schema up to ``LedgerMigrations/all``, or says why it cannot.
///
/// - A database with no tables becomes a new ledger: every step runs.
/// - A ledger of the release before migrations (`user_version` 3 and exactly its four tables) is recorded as
///   having applied the first step, then the rest run.
/// - A ledger whose `migrations` table names a step this program does not know was written by a later release:
///   it is refused, never changed.
/// - Any other database is not a ledger (`--db` pointed at the wrong file): refused, never changed.
///
/// All pending steps run in one transaction, so a ledger is never left half-migrated.
struct LedgerMigrator {
    var migrations = LedgerMigrations.all

    /// Where a database stands against this program's schema.
    enum Standing: Equatable {
        /// No tables at all: a new ledger.
        case empty
        /// A ledger with these steps still to apply (none: up to date).
        case ledger(pending: [String])

        /// A ledger that read-only commands can read: nothing pending but steps only writers need.
        var isReadable: Bool {
            guard case .ledger(let pending) = self else { return false }
            return LedgerMigrations.needingAWriter(pending).isEmpty
        }
    }

    /// The database's standing; throws `.foreign` or `.newerLedger` for what must be refused.
    func standing(of connection: some SchemaConnection) throws(LedgerError) -> Standing {
        let tables = try connection.tableNames()
        if tables.isEmpty { return .empty }
        let names = migrations.map(\.name)
        guard tables.contains("migrations") else {
            let v3Tables: Set<String> = ["files", "records", "facts", "quarantine"]
            if tables == v3Tables, try connection.legacySchemaVersion() == 3 { return .ledger(pending: Array(names.dropFirst())) }
            if tables.isSuperset(of: v3Tables) {
                throw LedgerError(kind: .newerLedger, path: connection.databaseName, message: """
                    written by an old version of subledger whose ledgers cannot be upgraded (schema \
                    \(try connection.legacySchemaVersion() ?? 0)): ingest the archives again into a new --db
                    """)
            }
            throw Self.foreign(connection.databaseName)
        }
        let applied = try connection.strings("SELECT name FROM migrations ORDER BY name")
        if tables.contains("ledger_meta"),
           try connection.strings("SELECT value FROM ledger_meta WHERE key = 'format'") != ["subledger-ledger"] {
            throw Self.foreign(connection.databaseName)
        }
        let unknown = applied.filter { !names.contains($0) }
        guard unknown.isEmpty else {
            throw LedgerError(kind: .newerLedger, path: connection.databaseName, message: """
                written by a later version of subledger (schema steps \(unknown.joined(separator: ", ")) are \
                unknown to this one): upgrade subledger to read it
                """)
        }
        return .ledger(pending: names.filter { !applied.contains($0) })
    }

    /// Applies every pending step in one transaction (the caller holds the ledger's write lock) and returns the
    /// names applied.
    @discardableResult
    func migrate(_ connection: some SchemaConnection) throws(LedgerError) -> [String] {
        try connection.execute("BEGIN")
        do {
            let pending: [String]
            switch try standing(of: connection) {
            case .empty:
                try connection.execute(Self.createMigrations)
                pending = migrations.map(\.name)
            case .ledger(let steps):
                if try !connection.tableNames().contains("migrations") {
                    try connection.execute(Self.createMigrations)
                    try record(LedgerMigrations.baseline, on: connection)
                }
                pending = steps
            }
            let ledgerId = UUID().uuidString.lowercased()
            for migration in migrations where pending.contains(migration.name) {
                let statements = migration.engines.contains(connection.dialect) ? migration.statements(ledgerId) : []
                for statement in statements {
                    try connection.execute(connection.dialect.render(statement))
                }
                try record(migration.name, on: connection)
            }
            try connection.execute("COMMIT")
            return pending
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    private func record(_ name: String, on connection: some SchemaConnection) throws(LedgerError) {
        let appliedAt = Int64((Date().timeIntervalSince1970 * 1000).rounded())
        try connection.execute("INSERT INTO migrations (name, applied_at) VALUES ('\(name)', \(appliedAt))")
    }

    static let createMigrations = """
        CREATE TABLE migrations (
            name            TEXT    NOT NULL PRIMARY KEY,
            applied_at      BIGINT  NOT NULL
        )
        """

    static func foreign(_ location: String) -> LedgerError {
        LedgerError(kind: .foreign, path: location, message: """
            not a subledger ledger (it holds other tables); nothing was changed: give --db a new file or an \
            existing ledger
            """)
    }
}

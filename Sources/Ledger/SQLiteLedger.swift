import Crypto
import Facts
import Foundation
import Ingest
import SystemSQLite

/// The ledger in one SQLite database file, the embedded default (see ``LedgerMigrations`` for the tables and
/// why each exists, ``LedgerSchema`` for the statements).
///
/// WAL journal with `synchronous = NORMAL`: a committed transaction survives a killed process (only an OS
/// crash may lose the last commits, which a re-run reads again), and `status` / `report` can read while an
/// ingest writes. One writer process at a time holds ``SQLiteWriteLock`` (a file lock beside the database).
/// Statements are prepared once per connection and reused.
///
/// A class because it owns the C connection; not `Sendable`: use one per thread.
public final class SQLiteLedger: LedgerStore {
    public let path: String
    public var location: String { path }
    let connection: SQLiteConnection
    private var statements: [SQLiteStatement] = []
    private var inTransaction = false

    /// Opens (and with ``LedgerAccess/readWrite`` creates) the ledger at `path`. `busyTimeout` bounds how long a
    /// statement waits for another connection's write lock. A database that is not a subledger ledger is refused
    /// (``LedgerError/Kind/foreign``) and left as it was.
    public init(path: String, access: LedgerAccess = .readWrite, busyTimeout: Duration = .seconds(30)) throws(LedgerError) {
        self.path = path
        connection = try SQLiteConnection(path: path, mode: access == .readWrite ? .readWrite : .readOnly)
        let milliseconds = busyTimeout.components.seconds * 1000 + busyTimeout.components.attoseconds / 1_000_000_000_000_000
        connection.setBusyTimeout(milliseconds: Int32(clamping: milliseconds))
        let standing = try LedgerMigrator().standing(of: connection)
        switch access {
        case .readWrite:
            // 64 MiB of page cache instead of SQLite's 2 MiB: fact keys and dedup keys are hashes, so inserts land
            // on random pages of their indexes. Bounded, so memory stays flat whatever the ledger's size.
            try connection.execute("PRAGMA cache_size = -65536")
            try connection.execute("PRAGMA journal_mode = WAL")
            try connection.execute("PRAGMA synchronous = NORMAL")
        case .readOnly:
            guard standing == .ledger(pending: []) else {
                throw LedgerError(kind: standing == .empty ? .foreign : .needsReprocess, path: path,
                                  message: standing == .empty
                                    ? "not a subledger ledger (it holds no tables); run `subledger ingest` to make one"
                                    : "written by an earlier version of subledger: run `subledger reprocess --db \(path)` to upgrade it")
            }
        }
    }

    /// Takes the file lock of writers, then brings the schema up to date (``LedgerMigrator``).
    public func lockForWriting(timeout: Duration) throws(LedgerError) -> any LedgerLock {
        let lock = try SQLiteWriteLock(databasePath: path, timeout: timeout)
        try LedgerMigrator().migrate(connection)
        return lock
    }

    // MARK: transactions

    public func beginTransaction() throws(LedgerError) {
        // IMMEDIATE takes the write lock up front, so a transaction never fails half-way on a lock upgrade.
        try connection.execute("BEGIN IMMEDIATE")
        inTransaction = true
    }

    public func commitTransaction() throws(LedgerError) {
        try connection.execute("COMMIT")
        inTransaction = false
    }

    public func rollbackTransaction() {
        guard inTransaction else { return }
        try? connection.execute("ROLLBACK")
        inTransaction = false
    }

    /// Runs `body` in a transaction of its own, committed when it returns.
    func inOwnTransaction<T>(_ body: () throws(LedgerError) -> T) throws(LedgerError) -> T {
        try beginTransaction()
        do {
            let result = try body()
            try commitTransaction()
            return result
        } catch {
            rollbackTransaction()
            throw error
        }
    }

    // MARK: standing

    public func standing(rulesVersion: Int64) throws(LedgerError) -> LedgerStanding {
        let pending: [String]
        switch try LedgerMigrator().standing(of: connection) {
        case .empty: pending = LedgerMigrations.all.map(\.name)
        case .ledger(let steps): pending = steps
        }
        guard pending.isEmpty else {
            return LedgerStanding(ledgerId: "", rulesVersion: nil, reprocess: nil, pendingMigrations: pending,
                                  recordsWithoutPayload: true, isEmpty: false)
        }
        return LedgerStanding(
            ledgerId: try meta("ledger_id") ?? "", rulesVersion: try meta("rules_version").flatMap { Int64($0) },
            reprocess: try meta("reprocess").flatMap(ReprocessScope.init(rawValue:)), pendingMigrations: [],
            recordsWithoutPayload: try exists(LedgerSchema.anyRecordWithoutPayload),
            isEmpty: !(try exists(LedgerSchema.anyRecord)))
    }

    func meta(_ key: String) throws(LedgerError) -> String? {
        let statement = try prepared(LedgerSchema.metaValue)
        try statement.bind(1, key)
        return try statement.step() ? statement.string(0) : nil
    }

    func setMeta(_ key: String, _ value: String?) throws(LedgerError) {
        if let value {
            let statement = try prepared(LedgerSchema.setMeta)
            try statement.bind(1, key)
            try statement.bind(2, value)
            try statement.run()
        } else {
            let statement = try prepared(LedgerSchema.deleteMeta)
            try statement.bind(1, key)
            try statement.run()
        }
    }

    func exists(_ sql: String) throws(LedgerError) -> Bool {
        let statement = try prepared(sql)
        defer { statement.reset() }
        return try statement.step()
    }

    public func setRulesVersion(_ rulesVersion: Int64) throws(LedgerError) {
        try setMeta("rules_version", String(rulesVersion))
    }

    // MARK: payload dictionaries

    public func payloadDictionaries() throws(LedgerError) -> [PayloadDictionary] {
        let statement = try prepared(LedgerSchema.listDictionaries)
        var dictionaries: [PayloadDictionary] = []
        while try statement.step() {
            dictionaries.append(PayloadDictionary(id: statement.int64(0), bytes: statement.blob(1)))
        }
        return dictionaries
    }

    public func addPayloadDictionary(_ bytes: [UInt8]) throws(LedgerError) -> PayloadDictionary {
        let insert = try prepared(LedgerSchema.insertDictionary)
        try insert.bind(1, blob: bytes[...])
        try insert.bind(2, Self.now())
        try insert.run()
        let last = try prepared(LedgerSchema.lastDictionary)
        guard try last.step() else {
            throw LedgerError(kind: .corrupt, path: path, message: "a payload dictionary was stored and not found")
        }
        return PayloadDictionary(id: last.int64(0), bytes: last.blob(1))
    }

    // MARK: helpers

    /// The statement for `sql`, prepared on first use and reset for reuse.
    ///
    /// A short list searched in order, not a dictionary: `sql` is one of ``LedgerSchema``'s constants, and two
    /// copies of one constant share their storage, so `==` answers from the pointers without reading the text,
    /// where hashing a few hundred characters of SQL for every row written cost more than the row's binds.
    func prepared(_ sql: String) throws(LedgerError) -> SQLiteStatement {
        if let statement = statements.first(where: { $0.sql == sql }) {
            statement.reset()
            return statement
        }
        let statement = try connection.prepare(sql)
        statements.append(statement)
        return statement
    }

    var sqlite: SQLiteConnection { connection }

    /// Wall-clock time for `ingested_at` (ms, UTC); the only non-deterministic column, kept out of the digest.
    static func now() -> Millis { Millis((Date().timeIntervalSince1970 * 1000).rounded()) }
}

extension SQLiteConnection: SchemaConnection {
    var dialect: SQLDialect { .sqlite }
    var location: String { path }

    func tableNames() throws(LedgerError) -> Set<String> {
        Set(try strings("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"))
    }

    func strings(_ sql: String) throws(LedgerError) -> [String] {
        let statement = try prepare(sql)
        var rows: [String] = []
        while try statement.step() { rows.append(statement.string(0)) }
        return rows
    }

    func legacySchemaVersion() throws(LedgerError) -> Int64? {
        let statement = try prepare("PRAGMA user_version")
        return try statement.step() ? statement.int64(0) : nil
    }
}

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
public final class SQLiteLedger: SQLLedger {
    public let path: String
    public var location: String { path }
    let connection: SQLiteConnection
    private var statements: [SQLiteStatement] = []
    private(set) var inTransaction = false
    /// The size of the ``TestSubjectFilter`` of ``outcomeCounts(run:)``, as a power of 2 bits. Tests shrink it so that
    /// most subjects seem test purchases' and only the probes of the ledger can tell.
    var testSubjectFilterBitsLog2 = 24
    /// How many facts the open transaction staged and has not inserted yet (``SQLiteLedger/insertPendingFacts()``);
    /// the commit and every shared statement on the facts table insert them first.
    var pendingFactCount = 0
    /// At most this many facts wait in the stage (``SQLiteLedger/createStage``): with their sort, 460 MB of
    /// temporary files at most in the bench ingest. A merge per transaction or per 262,144 facts took the same
    /// time there (3.0 and 3.7 s of merging in 1 and 5 merges).
    var pendingFactsLimit = 1 << 20
    /// The facts this connection wrote, which spares the stage their repeats stated later.
    var statedFacts = StatedFacts()

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
            // A new ledger has pages of 16 KiB instead of 4: a transaction's writes cover most pages of the facts
            // tree, and four times fewer reads and writes of them halved the ingest's system time (bench: 1.9 ->
            // 1.2 s; 5 x: 31 -> 27 s). Set before the cache size, which SQLite counts in pages of the size then.
            if standing == .empty { try connection.execute("PRAGMA page_size = 16384") }
            // 64 MiB of page cache instead of SQLite's 2 MiB: fact keys and dedup keys are hashes, so inserts land
            // on random pages of their indexes. Bounded, so memory stays flat whatever the ledger's size.
            try connection.execute("PRAGMA cache_size = -65536")
            try connection.execute("PRAGMA journal_mode = WAL")
            try connection.execute("PRAGMA synchronous = NORMAL")
            try connection.execute(Self.createStage)
        case .readOnly:
            guard standing.isReadable else {
                throw LedgerError(kind: standing == .empty ? .foreign : .needsReprocess, path: path,
                                  message: standing == .empty
                                    ? "not a subledger ledger (it holds no tables); run `subledger ingest` to make one"
                                    : "written by an earlier version of subledger: run `subledger reprocess --db \(path)` to upgrade it")
            }
        }
    }

    /// Takes the file lock of writers (one at a time, whatever `mode`), then brings the schema up to date
    /// (``LedgerMigrator``).
    public func lockForWriting(_ mode: LedgerLockMode, timeout: Duration) throws(LedgerError) -> any LedgerLock {
        let lock = try SQLiteWriteLock(databasePath: path, timeout: timeout)
        try LedgerMigrator().migrate(connection)
        statedFacts.forget()
        return lock
    }

    // MARK: transactions

    public func beginTransaction() throws(LedgerError) {
        // IMMEDIATE takes the write lock up front, so a transaction never fails half-way on a lock upgrade.
        try connection.execute("BEGIN IMMEDIATE")
        inTransaction = true
    }

    public func commitTransaction() throws(LedgerError) {
        try insertPendingFacts()
        try connection.execute("COMMIT")
        inTransaction = false
    }

    public func rollbackTransaction() {
        pendingFactCount = 0
        statedFacts.forget()
        guard inTransaction else { return }
        try? connection.execute("ROLLBACK")
        inTransaction = false
    }

    // MARK: the engine's primitives (SQLLedger)

    func pendingMigrations() throws(LedgerError) -> [String] {
        switch try LedgerMigrator().standing(of: connection) {
        case .empty: LedgerMigrations.all.map(\.name)
        case .ledger(let steps): steps
        }
    }

    /// SQLite's `quick_check` (every page of the file is readable and well formed) or, `thorough`, its
    /// `integrity_check` (indexes against their tables and `NOT NULL` constraints too).
    func structuralProblems(thorough: Bool) throws(LedgerError) -> [String] {
        let name = thorough ? "integrity_check" : "quick_check"
        let statement = try connection.prepare(thorough ? "PRAGMA integrity_check(100)" : "PRAGMA quick_check(20)")
        var rows: [String] = []
        while try statement.step() { rows.append(statement.optionalString(0) ?? "") }
        return rows == ["ok"] ? [] : rows.map { "SQLite \(name): \($0)" }
    }

    var recovery: String { Self.recovery(path) }

    var searchesConflictsInMessageKeysOnly: Bool { false }

    /// What to do about a damaged ledger file at `path`.
    static func recovery(_ path: String) -> String {
        """
        . Nothing was changed. Restore the ledger from a backup, or rebuild it from the archives: move \(path) \
        aside and run `subledger ingest` on all of them with a new --db
        """
    }

    /// Runs a query of the shared statements. One that names the facts table first inserts the facts waiting
    /// for the commit (``pendingFactCount``), so that none reads around them, and forgets the facts written
    /// (``StatedFacts``); the others (a file's progress, the queue's check once per batch) leave both alone.
    func eachRow(_ sql: String, _ values: [SQLValue], _ body: (any SQLRow) throws(LedgerError) -> Void) throws(LedgerError) {
        try insertPendingFacts(before: sql)
        statedFacts.forget(before: sql)
        let statement = try prepared(sql)
        defer { statement.reset() }
        try statement.bind(values)
        let row = SQLiteRow(statement: statement)
        while try statement.step() { try body(row) }
    }

    func execute(_ sql: String, _ values: [SQLValue]) throws(LedgerError) {
        try insertPendingFacts(before: sql)
        statedFacts.forget(before: sql)
        let statement = try prepared(sql)
        try statement.bind(values)
        try statement.run()
    }

    func loadChainRoots(_ roots: [ChainRoot]) throws(LedgerError) {
        try connection.execute(LedgerSchema.createChainRoots)
        try connection.execute(LedgerSchema.clearChainRoots)
        for root in roots {
            let buckets = root.buckets
            try execute(LedgerSchema.insertChainRoot, [.text(root.subject.platform), .text(root.subject.subject),
                                                       .integer(Int64(buckets.subject)), .text(root.root),
                                                       .integer(Int64(buckets.root))])
        }
    }

    // MARK: helpers

    /// The statement for `sql`, prepared on first use and reset for reuse.
    ///
    /// A short list searched in order, not a dictionary: `sql` is one of ``LedgerSchema``'s constants, and two
    /// copies of one constant share their storage, so `==` answers from the pointers without reading the text,
    /// where hashing a few hundred characters of SQL for every row written cost more than the row's binds. The
    /// lengths are compared first: two different statements of one length are rare, and comparing their text
    /// up to the first difference was, for statements sharing a prefix, a measurable part of every row.
    func prepared(_ sql: String) throws(LedgerError) -> SQLiteStatement {
        let length = sql.utf8.count
        if let statement = statements.first(where: { $0.sql.utf8.count == length && $0.sql == sql }) {
            statement.reset()
            return statement
        }
        let statement = try connection.prepare(sql)
        statements.append(statement)
        return statement
    }

    var sqlite: SQLiteConnection { connection }

}

/// The current row of a statement, as the shared queries read it.
struct SQLiteRow: SQLRow {
    let statement: SQLiteStatement

    func text(_ column: Int) throws(LedgerError) -> String? { statement.optionalString(Int32(column)) }
    func integer(_ column: Int) throws(LedgerError) -> Int64? { statement.optionalInt64(Int32(column)) }
    func bytes(_ column: Int) throws(LedgerError) -> [UInt8]? {
        statement.isNull(Int32(column)) ? nil : statement.blob(Int32(column))
    }
}

extension SQLiteStatement {
    /// Binds `values` to the placeholders, in order.
    func bind(_ values: [SQLValue]) throws(LedgerError) {
        for (index, value) in zip(Int32(1)..., values) {
            switch value {
            case .text(let text): try bind(index, text)
            case .integer(let integer): try bind(index, integer)
            case .bytes(let bytes?): try bind(index, blob: bytes[...])
            case .bytes(nil): try bind(index, nil as Int64?)
            }
        }
    }
}

extension SQLiteConnection: SchemaConnection {
    var dialect: SQLDialect { .sqlite }
    var databaseName: String { path }

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

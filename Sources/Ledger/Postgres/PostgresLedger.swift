import Facts
import Foundation
import Ingest
import NIOCore
import PostgresNIO

/// The ledger in a PostgreSQL database, shared by many `subledger` processes on many machines (ledger.md, "One
/// interface, two engines"): the same tables and statements as ``SQLiteLedger`` where the SQL allows (the schema
/// is ``LedgerMigrations`` rendered for PostgreSQL: `BYTEA`, `TEXT COLLATE "C"` so that text sorts in byte order
/// as in SQLite, no `WITHOUT ROWID`), and these differences, all in this folder:
/// - writers hold an advisory lock: shared for ingest (many at once), exclusive for reprocess; schema steps run
///   under a lock of their own;
/// - files are claimed with leases (``PostgresFileClaimer``), so that several ingests over the same inputs split
///   the files and a dead one's file is taken over;
/// - records, facts and quarantine rows arrive through `COPY` into session-local staging tables, then one
///   `INSERT … SELECT … ON CONFLICT` per table and batch, rows in key order (``write(_:dequeuing:)``).
///
/// A class because it owns its connection; not `Sendable`: one per thread, like a connection.
public final class PostgresLedger: SQLLedger {
    let session: PostgresSession
    let postgres: PostgresLocation
    public var location: String { postgres.description }
    private var inTransaction = false
    /// Statements of the open transaction, replayed when the server chose it as a deadlock's victim.
    private var replay: [(PostgresSession) throws -> Void] = []
    /// The facts this connection wrote, whose repeats stated later it does not send again (``StatedFacts``).
    var statedFacts = StatedFacts()

    /// Connects to the ledger; a database that holds other tables is refused (``LedgerError/Kind/foreign``).
    /// Read-only access refuses a ledger with schema steps to apply, as SQLite's does.
    public init(_ location: PostgresLocation, access: LedgerAccess) throws(LedgerError) {
        postgres = location
        session = try PostgresSession(location)
        // Every cursor here is read to its end (``eachRow(_:_:_:)``): the server is to plan for the whole result,
        // not for its first tenth (its default for cursors, which favours nested loops over hashing).
        try session.query("SET cursor_tuple_fraction = 1")
        let standing = try LedgerMigrator().standing(of: session)
        if access == .readOnly && !standing.isReadable {
            throw LedgerError(kind: standing == .empty ? .foreign : .needsReprocess, path: location.description,
                              message: standing == .empty
                                ? "holds no subledger ledger; run `subledger ingest --db \(location)` to make one"
                                : "written by an earlier version of subledger: run `subledger reprocess --db \(location)` to upgrade it")
        }
    }

    // MARK: locking and schema

    /// Takes the writers' advisory lock (shared by ingests, exclusive for a reprocess), then applies pending
    /// schema steps under the schema lock, which one process at a time holds.
    public func lockForWriting(_ mode: LedgerLockMode, timeout: Duration) throws(LedgerError) -> any LedgerLock {
        let lock = try PostgresAdvisoryLock(session: session, key: PostgresAdvisoryLock.writers, mode: mode, timeout: timeout)
        let schema = try PostgresAdvisoryLock(session: session, key: PostgresAdvisoryLock.schema, mode: .exclusive, timeout: timeout)
        defer { schema.release() }
        try LedgerMigrator().migrate(session)
        try createStagingTables()
        statedFacts.forget()
        return lock
    }

    // MARK: transactions

    public func beginTransaction() throws(LedgerError) {
        try session.query("BEGIN")
        inTransaction = true
        replay.removeAll()
    }

    public func commitTransaction() throws(LedgerError) {
        try run { session throws(LedgerError) in try session.query("COMMIT") }
        inTransaction = false
        replay.removeAll()
    }

    public func rollbackTransaction() {
        statedFacts.forget()
        guard inTransaction else { return }
        _ = try? session.query("ROLLBACK")
        inTransaction = false
        replay.removeAll()
    }

    /// Runs `step` in the open transaction; when the server aborts the transaction as a deadlock's victim (or a
    /// serialization failure), rolls back and runs the transaction's steps again, up to eight times, backing off a
    /// little longer each time. A deadlock met while replaying the earlier steps is retried the same way (several
    /// ingests storing overlapping batches can meet again). Outside a transaction the step runs once.
    @discardableResult
    func run<T>(_ step: @escaping (PostgresSession) throws(LedgerError) -> T) throws(LedgerError) -> T {
        var attempt = 0
        while true {
            do throws(LedgerError) {
                if attempt > 0 { try restart(attempt: attempt) }
                let result = try step(session)
                if inTransaction { replay.append { session in _ = try step(session) } }
                return result
            } catch where inTransaction && attempt < 8 && error.isTransient {
                attempt += 1
            }
        }
    }

    /// Rolls the aborted transaction back, waits a little (longer each attempt), and runs its earlier steps again.
    private func restart(attempt: Int) throws(LedgerError) {
        _ = try? session.query("ROLLBACK")
        usleep(useconds_t(20_000 * attempt * attempt))
        try session.query("BEGIN")
        for earlier in replay {
            do { try earlier(session) } catch let failure as LedgerError { throw failure } catch {
                throw LedgerError(kind: .unavailable, path: location, message: "the PostgreSQL server failed while a transaction was retried",
                                  detail: String(describing: error))
            }
        }
    }

    // MARK: the engine's primitives (SQLLedger)

    func pendingMigrations() throws(LedgerError) -> [String] {
        switch try LedgerMigrator().standing(of: session) {
        case .empty: LedgerMigrations.all.map(\.name)
        case .ledger(let steps): steps
        }
    }

    /// None: the server keeps its own pages and indexes consistent (a check of them needs the `amcheck`
    /// extension and superuser rights); the ledger's own rules are checked alike on both engines.
    func structuralProblems(thorough: Bool) throws(LedgerError) -> [String] { [] }

    /// One query: PostgreSQL groups the few outcome groups by hashing, whatever the number of records.
    func outcomeCounts(run: String?) throws(LedgerError) -> RecordOutcomes {
        guard let run else { return try groupedOutcomes(LedgerSchema.recordOutcomes, []) }
        return try groupedOutcomes(LedgerSchema.runOutcomes, [.text(run)])
    }

    var searchesConflictsInMessageKeysOnly: Bool { true }

    var recovery: String {
        """
        . Nothing was changed. Restore the database from a backup, or rebuild the ledger from the archives: run \
        `subledger ingest` on all of them into a new database
        """
    }

    /// Reads through a cursor, a page of rows at a time, so that a scan of millions of facts holds two pages: the
    /// next page is asked for before the rows of the current one go to `body`, so the server makes it meanwhile
    /// (one page after the other, client and server took turns: a 1-slice report of the bench ledger spent 8.4 s
    /// for 5.3 s of its own CPU). A statement run meanwhile (by `body`, or the `ROLLBACK` after it threw) waits
    /// for that page first (``PostgresSession/send(_:)``), so the server sees the session's statements in order.
    func eachRow(_ sql: String, _ values: [SQLValue], _ body: (any SQLRow) throws(LedgerError) -> Void) throws(LedgerError) {
        statedFacts.forget(before: sql)
        let ownTransaction = !inTransaction
        if ownTransaction { try session.query("BEGIN") }
        do {
            try session.query("DECLARE subledger_rows NO SCROLL CURSOR FOR " + sql, values)
            var next = try session.send("FETCH 4096 FROM subledger_rows")
            while true {
                let page = try next.rows()
                let more = page.count == 4096
                if more { next = try session.send("FETCH 4096 FROM subledger_rows") }
                for row in page { try body(row) }
                if !more { break }
            }
            try session.query("CLOSE subledger_rows")
            if ownTransaction { try session.query("COMMIT") }
        } catch {
            if ownTransaction { _ = try? session.query("ROLLBACK") } else { _ = try? session.query("CLOSE subledger_rows") }
            throw error
        }
    }

    func execute(_ sql: String, _ values: [SQLValue]) throws(LedgerError) {
        statedFacts.forget(before: sql)
        try run { session throws(LedgerError) in try session.query(sql, values) }
    }

    func loadChainRoots(_ roots: [ChainRoot]) throws(LedgerError) {
        try session.query(PostgresSQL.temporary(LedgerSchema.createChainRoots))
        try session.query(LedgerSchema.clearChainRoots)
        var rows = PostgresCopyRows()
        for root in roots {
            let buckets = root.buckets
            rows.row([.text(root.subject.platform), .text(root.subject.subject), .integer(Int64(buckets.subject)),
                      .text(root.root), .integer(Int64(buckets.root))])
        }
        if !rows.bytes.isEmpty {
            try session.copy(into: "chain_roots", columns: ["platform", "subject", "bucket", "root", "root_bucket"],
                             rows: rows.bytes)
        }
    }
}

extension LedgerError {
    /// A deadlock or serialization failure: the server aborted the transaction, which can simply run again.
    var isTransient: Bool {
        if case .server(let state) = kind { return state == "40P01" || state == "40001" }
        return false
    }
}

extension PostgresSession: SchemaConnection {
    var dialect: SQLDialect { .postgres }
    var databaseName: String { location.description }

    func execute(_ sql: String) throws(LedgerError) {
        try query(sql)
    }

    func tableNames() throws(LedgerError) -> Set<String> {
        Set(try strings("SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema()"))
    }

    func strings(_ sql: String) throws(LedgerError) -> [String] {
        try query(sql).map { row throws(LedgerError) in try row.text(0) ?? "" }
    }

    func legacySchemaVersion() throws(LedgerError) -> Int64? { nil }
}

/// A PostgreSQL advisory lock held by one session, released on ``release()`` or when the session's connection
/// closes (a process killed with SIGKILL loses its connection, and so its locks, at once).
final class PostgresAdvisoryLock: LedgerLock {
    /// The keys: the writers' lock, and the schema's (migrations).
    static let writers: Int64 = 0x5355_424C_0001
    static let schema: Int64 = 0x5355_424C_0002

    private let session: PostgresSession
    private let key: Int64
    private let mode: LedgerLockMode
    private var held = true

    init(session: PostgresSession, key: Int64, mode: LedgerLockMode, timeout: Duration) throws(LedgerError) {
        self.session = session
        self.key = key
        self.mode = mode
        let function = mode == .shared ? "pg_try_advisory_lock_shared" : "pg_try_advisory_lock"
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while try session.query("SELECT \(function)(\(key))").first?.bool(0) != true {
            guard clock.now < deadline else {
                throw LedgerError(kind: .busy, path: session.location.description, message: mode == .shared
                    ? "a reprocess is rewriting \(session.location); wait for it to finish"
                    : "other writers are working on \(session.location); wait for them to finish")
            }
            usleep(100_000)
        }
    }

    func release() {
        guard held else { return }
        held = false
        let function = mode == .shared ? "pg_advisory_unlock_shared" : "pg_advisory_unlock"
        _ = try? session.query("SELECT \(function)(\(key))")
    }

    deinit { release() }
}


/// A result row as the shared queries read it.
struct PostgresResultRow: SQLRow {
    let cells: [PostgresCell]

    init(_ row: PostgresRow) {
        cells = Array(row)
    }

    func text(_ column: Int) throws(LedgerError) -> String? { try decode(column, as: String?.self) }
    func bool(_ column: Int) throws(LedgerError) -> Bool? { try decode(column, as: Bool?.self) }
    func integer(_ column: Int) throws(LedgerError) -> Int64? { try decode(column, as: Int64?.self) }
    func bytes(_ column: Int) throws(LedgerError) -> [UInt8]? {
        try decode(column, as: ByteBuffer?.self).map { Array($0.readableBytesView) }
    }

    private func decode<T: PostgresDecodable>(_ column: Int, as type: T.Type) throws(LedgerError) -> T {
        guard column < cells.count else {
            throw LedgerError(kind: .corrupt, path: "", message: "a row has no column \(column)")
        }
        do {
            return try cells[column].decode(T.self)
        } catch {
            throw LedgerError(kind: .corrupt, path: "", message: "column \(cells[column].columnName) is not a \(T.self)")
        }
    }
}

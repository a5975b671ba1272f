import Facts

/// A value bound to one of ``LedgerSchema``'s `?` placeholders.
enum SQLValue: Sendable {
    case text(String?)
    case integer(Int64?)
    case bytes([UInt8]?)
}

/// One row of a result, read by column index (0-based). A row is valid only inside the call that hands it out.
protocol SQLRow {
    func text(_ column: Int) throws(LedgerError) -> String?
    func integer(_ column: Int) throws(LedgerError) -> Int64?
    func bytes(_ column: Int) throws(LedgerError) -> [UInt8]?
}

extension SQLRow {
    /// A column that is never NULL (a `NOT NULL` column of the schema); NULL there means a damaged ledger.
    func requiredText(_ column: Int) throws(LedgerError) -> String {
        guard let value = try text(column) else { throw Self.null(column) }
        return value
    }

    func requiredInteger(_ column: Int) throws(LedgerError) -> Int64 {
        guard let value = try integer(column) else { throw Self.null(column) }
        return value
    }

    private static func null(_ column: Int) -> LedgerError {
        LedgerError(kind: .corrupt, path: "", message: "column \(column) of a row is NULL where the schema forbids it")
    }
}

/// What the engine-independent half of a ledger (the queries both engines share, in the extensions on this
/// protocol) needs of an engine: statements run with bound values, inside the open transaction or one of their
/// own. ``SQLiteLedger`` and ``PostgresLedger`` provide these and the parts that differ (opening, locking, file
/// claims, batch writes, the queue reader).
protocol SQLLedger: LedgerStore {
    /// Schema steps this program would apply to the ledger.
    func pendingMigrations() throws(LedgerError) -> [String]
    /// Runs `sql` and hands each row to `body`, in order, holding one row (or one page of rows) at a time.
    func eachRow(_ sql: String, _ values: [SQLValue], _ body: (any SQLRow) throws(LedgerError) -> Void) throws(LedgerError)
    /// Runs a statement that returns no rows, inside the open transaction when there is one.
    func execute(_ sql: String, _ values: [SQLValue]) throws(LedgerError)
    /// Fills the session's `chain_roots` table with `roots` (emptied first), for the report's scan.
    func loadChainRoots(_ roots: [ChainRoot]) throws(LedgerError)
    /// The engine's own check of its storage, each problem a sentence (empty when sound); `thorough` for
    /// `status --verify`, else the quick check every ingest and report runs when it opens the ledger.
    func structuralProblems(thorough: Bool) throws(LedgerError) -> [String]
    /// What to do about a damaged ledger: appended to every message that says it is damaged.
    var recovery: String { get }
    /// ``LedgerStore/recordOutcomes(run:)`` without its message-id conflicts: the records by source and where
    /// they ended, a test purchase's records as excluded. PostgreSQL groups them in one query
    /// (``LedgerSchema/recordOutcomes``); SQLite, which groups by sorting every row, counts them in one pass here.
    func outcomeCounts(run: String?) throws(LedgerError) -> RecordOutcomes
    /// Puts every record of `records` on the reprocess queue, in the order its reader keeps (a full reprocess;
    /// quarantined records are queued by the shared ``LedgerSchema/queueQuarantine``). PostgreSQL queues keys
    /// (``LedgerSchema/queueRecords``), SQLite rowids (`SQLiteLedger+Reprocess.swift`).
    func queueStoredRecords() throws(LedgerError)
    /// Whether anything is still queued for the reprocess under way.
    func anyQueued() throws(LedgerError) -> Bool
    /// Whether the search of a run's message-id conflicts names the message keys as a range of its own
    /// (``LedgerSchema/runMessageIdConflicts(messagesOnly:)``): PostgreSQL hashes what it searches, SQLite
    /// walks each message's own keys and would take that range in their place.
    var searchesConflictsInMessageKeysOnly: Bool { get }
}

extension SQLLedger {
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

    /// Every row's first column as text.
    func strings(_ sql: String, _ values: [SQLValue] = []) throws(LedgerError) -> [String] {
        var result: [String] = []
        try eachRow(sql, values) { row throws(LedgerError) in result.append(try row.text(0) ?? "") }
        return result
    }

    /// Whether `sql` returns any row.
    func exists(_ sql: String, _ values: [SQLValue] = []) throws(LedgerError) -> Bool {
        var found = false
        try eachRow(sql, values) { _ throws(LedgerError) in found = true }
        return found
    }
}

import Facts
import Foundation
import Ingest

/// SQLite's reprocess queue (`011-sqlite-queue-of-rowids`): the quarantined records to try again wait in
/// `reprocess_queue` with their bytes, as on PostgreSQL, but the records wait as their rowids in
/// `reprocess_records`, their payloads and provenance staying in their old rows. A full reprocess appends
/// every rowid in order, a few bytes a record, where copying keys and provenances into the queue, each key
/// inserted at a random place of its primary key, took 3 s of the bench ledger's reprocess before its first
/// record. A record leaves the list in the transaction that writes its new outcome (``claimQueuedRecord(_:)``).
///
/// The old row of a queued record is its row in `records` while its rowid is listed, unless another copy of its
/// key was written first (a released quarantined copy, a file read again): that copy takes the row over (a record
/// keeps its key's row), and the old row's columns move to `reprocess_stash` under the same rowid, which the
/// queue reader hands out in its place. The ledger thus ends as if every old row had been deleted when the
/// reprocess began.
extension SQLiteLedger {
    public func queueReader() -> any ReprocessQueueReader {
        SQLiteQueueReader(path: path)
    }

    func queueStoredRecords() throws(LedgerError) {
        try execute(Self.queueRecordRowids, [])
    }

    func anyQueued() throws(LedgerError) -> Bool {
        try exists(Self.anyQueued)
    }

    /// Whether any record is waiting in `reprocess_records`: asked once per write batch, so that a write outside
    /// a reprocess looks for no stash.
    func anyRecordQueued() throws(LedgerError) -> Bool {
        try exists(Self.anyRecordQueued)
    }

    /// A queued record about to be written again (dequeued in this batch): `true` when its old row is still its
    /// key's row in `records` (listed and not stashed), which the new outcome then overwrites
    /// (``LedgerSchema/deleteRecord`` when it is no record any more). Either way it leaves the queue.
    func claimQueuedRecord(_ key: String) throws(LedgerError) -> Bool {
        let find = try prepared(Self.recordRowid)
        try find.bind(1, key)
        guard try find.step() else { return false }
        let rowid = find.int64(0)
        find.reset()
        let unlist = try prepared(Self.unlistRecord)
        try unlist.bind(1, rowid)
        try unlist.run()
        guard unlist.changes > 0 else { return false }
        let unstash = try prepared(Self.unstashRecord)
        try unstash.bind(1, rowid)
        try unstash.run()
        return unstash.changes == 0
    }

    /// Before a record that no queued record claimed is written: when its key's row is the old row of a queued
    /// record, that row's columns move to `reprocess_stash` and `true` says the write takes the row over.
    func stashQueuedRecord(_ key: String) throws(LedgerError) -> Bool {
        let stash = try prepared(Self.stashRecord)
        try stash.bind(1, key)
        try stash.run()
        return stash.changes > 0
    }

    func dequeue(_ record: QueuedRecord.ID) throws(LedgerError) {
        let statement = try prepared(LedgerSchema.dequeue)
        try statement.bind(1, record.origin.rawValue)
        try statement.bind(2, record.key)
        try statement.run()
    }

    /// Every record's rowid, ascending: the B-tree of the list is only appended to. Records without a payload
    /// were deleted before (their files are read again instead).
    static let queueRecordRowids = "INSERT INTO reprocess_records (record) SELECT rowid FROM records ORDER BY rowid"

    static let anyQueued = """
        SELECT 1 FROM reprocess_queue UNION ALL SELECT 1 FROM reprocess_records
        UNION ALL SELECT 1 FROM reprocess_stash LIMIT 1
        """

    static let anyRecordQueued = "SELECT 1 FROM reprocess_records LIMIT 1"

    static let recordRowid = "SELECT rowid FROM records WHERE dedup_key = ?"

    static let unlistRecord = "DELETE FROM reprocess_records WHERE record = ?"

    static let unstashRecord = "DELETE FROM reprocess_stash WHERE record = ?"

    static let stashRecord = """
        INSERT INTO reprocess_stash (record, key, file, member, position, payload, dictionary)
        SELECT r.rowid, r.dedup_key, r.file, r.member, r.position, r.payload, r.dictionary
        FROM records r JOIN reprocess_records q ON q.record = r.rowid
        WHERE r.dedup_key = ? AND NOT EXISTS (SELECT 1 FROM reprocess_stash s WHERE s.record = r.rowid)
        """

    /// A page of `reprocess_queue` (quarantined records, and records a release before `011` stashed there), in
    /// the order its rows were inserted; every row holds its payload.
    static let queuePage = """
        SELECT rowid, origin, key, file, member, position, payload, dictionary
        FROM reprocess_queue WHERE rowid > ? ORDER BY rowid LIMIT ?
        """

    /// A page of the listed records in rowid order, each with its old row's columns: its row in `records`, or
    /// its stash once another copy took the row over.
    static let recordPage = """
        SELECT q.record, r.dedup_key, r.file, r.member, r.position, r.payload, r.dictionary,
            s.key, s.file, s.member, s.position, s.payload, s.dictionary
        FROM reprocess_records q
        JOIN records r ON r.rowid = q.record
        LEFT JOIN reprocess_stash s ON s.record = q.record
        WHERE q.record > ?
        ORDER BY q.record
        LIMIT ?
        """
}

/// Pages through the reprocess queue on its own read-only connection, opened on first use by the thread that
/// reads (a connection serves one thread): first `reprocess_queue`, then the listed records. Each page is a short
/// read of its own, so the writer's commits are never held back by a long-lived read.
///
/// Records come in rowid order, the order they were stored in: the order ingest read them, its sources spread
/// over the run (``InputExpander``), and the order of the old rows on disk. Read in provenance order instead, all
/// App Store notifications came before all Play logs, as when folders were read one after the other, and the
/// reprocess took 1.4 times its ingest. PostgreSQL, whose tables have no rowid, reads in provenance order.
final class SQLiteQueueReader: ReprocessQueueReader, @unchecked Sendable {
    private let path: String
    /// Used only by the reader thread.
    private var connection: SQLiteConnection?
    /// Whether `reprocess_queue` has been read to its end (the reader thread's phase).
    private var queueDone = false
    /// The rowid of the last row handed out, in `reprocess_queue` and then in the list (the reader's cursor).
    private var cursor: Int64 = 0

    init(path: String) {
        self.path = path
    }

    func nextPage(limit: Int) throws(LedgerError) -> [QueuedRecord] {
        let connection: SQLiteConnection
        if let open = self.connection {
            connection = open
        } else {
            connection = try SQLiteConnection(path: path, mode: .readOnly)
            self.connection = connection
        }
        // The cursor and the phase move only once a page is read whole: a page that failed is read again.
        guard !queueDone else {
            let (records, last) = try recordPage(connection, after: cursor, limit: limit)
            cursor = last ?? cursor
            return records
        }
        let (page, last) = try queuePage(connection, after: cursor, limit: limit)
        if page.count == limit {
            cursor = last ?? cursor
            return page
        }
        // A page is full unless the queue ends in it (a short page is the end): the list fills it up.
        let (records, lastRecord) = try recordPage(connection, after: 0, limit: limit - page.count)
        queueDone = true
        cursor = lastRecord ?? 0
        return page + records
    }

    /// A page of `reprocess_queue` after the rowid `start`, and the rowid of its last row.
    private func queuePage(_ connection: SQLiteConnection, after start: Int64,
                           limit: Int) throws(LedgerError) -> ([QueuedRecord], last: Int64?) {
        try page(SQLiteLedger.queuePage, connection, after: start, limit: limit) { statement throws(LedgerError) in
            guard let origin = QueuedRecord.ID.Origin(rawValue: statement.string(1)) else {
                throw LedgerError(kind: .corrupt, path: path, message: "a queued record has the unknown origin \(statement.string(1))")
            }
            return Self.queued(origin, statement, from: 2)
        }
    }

    /// A page of the listed records after the rowid `start`, and the rowid of its last one.
    private func recordPage(_ connection: SQLiteConnection, after start: Int64,
                            limit: Int) throws(LedgerError) -> ([QueuedRecord], last: Int64?) {
        try page(SQLiteLedger.recordPage, connection, after: start, limit: limit) { statement in
            Self.queued(.record, statement, from: statement.isNull(7) ? 1 : 7)
        }
    }

    /// The rows of `sql` (a rowid first, bound to the rowid to start after and the limit) read by `record`, and
    /// the rowid of the last.
    private func page(_ sql: String, _ connection: SQLiteConnection, after start: Int64, limit: Int,
                      _ record: (SQLiteStatement) throws(LedgerError) -> QueuedRecord) throws(LedgerError)
        -> ([QueuedRecord], last: Int64?) {
        let statement = try connection.prepare(sql)
        try statement.bind(1, start)
        try statement.bind(2, limit)
        var page: [QueuedRecord] = []
        var last: Int64?
        while try statement.step() {
            last = statement.int64(0)
            page.append(try record(statement))
        }
        return (page, last)
    }

    /// The queued record whose key, file, member, position, payload and dictionary are the six columns from
    /// `column` on.
    private static func queued(_ origin: QueuedRecord.ID.Origin, _ statement: SQLiteStatement,
                               from column: Int32) -> QueuedRecord {
        let member = statement.string(column + 2)
        return QueuedRecord(
            id: QueuedRecord.ID(origin: origin, key: statement.string(column)),
            provenance: Provenance(file: statement.string(column + 1), member: member.isEmpty ? nil : member,
                                   position: statement.int64(column + 3)),
            payload: CompressedPayload(bytes: statement.blob(column + 4), dictionaryId: statement.int64(column + 5)))
    }
}

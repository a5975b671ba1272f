import Facts
import Foundation
import Ingest

extension SQLiteLedger {
    public func queueReader() -> any ReprocessQueueReader {
        SQLiteQueueReader(path: path)
    }

    func dequeue(_ record: QueuedRecord.ID) throws(LedgerError) {
        let statement = try prepared(LedgerSchema.dequeue)
        try statement.bind(1, record.origin.rawValue)
        try statement.bind(2, record.key)
        try statement.run()
    }

}

/// Pages through the reprocess queue on its own read-only connection, opened on first use by the thread that
/// reads (a connection serves one thread). Each page is a short read of its own, so the writer's commits are
/// never held back by a long-lived read.
///
/// The queue is read in the order its rows were inserted (their rowid), which is the order the records were
/// stored in: the order ingest read them, its sources spread over the run (``InputExpander``), and the order of
/// the old rows on disk, which the reader joins for their payloads. Read in provenance order instead, all App
/// Store notifications came before all Play logs, as when folders were read one after the other, and the
/// reprocess took 1.4 times its ingest. PostgreSQL, whose tables have no rowid, reads in provenance order.
final class SQLiteQueueReader: ReprocessQueueReader, @unchecked Sendable {
    private let path: String
    /// Used only by the reader thread.
    private var connection: SQLiteConnection?
    /// The rowid of the last queue row handed out (the reader thread's cursor).
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
        let statement = try connection.prepare(LedgerSchema.queuePageInStoredOrder)
        try statement.bind(1, cursor)
        try statement.bind(2, limit)
        var page: [QueuedRecord] = []
        while try statement.step() {
            cursor = statement.int64(0)
            guard let origin = QueuedRecord.ID.Origin(rawValue: statement.string(1)) else {
                throw LedgerError(kind: .corrupt, path: path, message: "a queued record has the unknown origin \(statement.string(1))")
            }
            let member = statement.string(4)
            page.append(QueuedRecord(
                id: QueuedRecord.ID(origin: origin, key: statement.string(2)),
                provenance: Provenance(file: statement.string(3), member: member.isEmpty ? nil : member,
                                       position: statement.int64(5)),
                payload: CompressedPayload(bytes: statement.blob(6), dictionaryId: statement.int64(7))))
        }
        return page
    }
}

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
final class SQLiteQueueReader: ReprocessQueueReader, @unchecked Sendable {
    private let path: String
    /// Used only by the reader thread.
    private var connection: SQLiteConnection?

    init(path: String) {
        self.path = path
    }

    func page(after last: QueuedRecord?, limit: Int) throws(LedgerError) -> [QueuedRecord] {
        let connection: SQLiteConnection
        if let open = self.connection {
            connection = open
        } else {
            connection = try SQLiteConnection(path: path, mode: .readOnly)
            self.connection = connection
        }
        let statement: SQLiteStatement
        if let last {
            statement = try connection.prepare(LedgerSchema.queuePage)
            try statement.bind(1, last.provenance.file)
            try statement.bind(2, last.provenance.member ?? "")
            try statement.bind(3, last.provenance.position)
            try statement.bind(4, last.id.origin.rawValue)
            try statement.bind(5, last.id.key)
            try statement.bind(6, limit)
        } else {
            statement = try connection.prepare(LedgerSchema.queueFirstPage)
            try statement.bind(1, limit)
        }
        var page: [QueuedRecord] = []
        while try statement.step() {
            guard let origin = QueuedRecord.ID.Origin(rawValue: statement.string(0)) else {
                throw LedgerError(kind: .corrupt, path: path, message: "a queued record has the unknown origin \(statement.string(0))")
            }
            let member = statement.string(3)
            page.append(QueuedRecord(
                id: QueuedRecord.ID(origin: origin, key: statement.string(1)),
                provenance: Provenance(file: statement.string(2), member: member.isEmpty ? nil : member,
                                       position: statement.int64(4)),
                payload: CompressedPayload(bytes: statement.blob(5), dictionaryId: statement.int64(6))))
        }
        return page
    }
}

import Facts
import Ingest

extension PostgresLedger {
    public func queueReader() -> any ReprocessQueueReader {
        PostgresQueueReader(location: postgres)
    }

    func queueStoredRecords() throws(LedgerError) {
        try execute(LedgerSchema.queueRecords, [])
    }

    func anyQueued() throws(LedgerError) -> Bool {
        try exists(LedgerSchema.anyQueued)
    }
}

/// Pages through the reprocess queue on its own connection, opened on first use by the thread that reads.
final class PostgresQueueReader: ReprocessQueueReader, @unchecked Sendable {
    private let location: PostgresLocation
    /// Used only by the reader thread.
    private var session: PostgresSession?
    /// The last queued record handed out (the reader thread's place in provenance order).
    private var last: QueuedRecord?

    init(location: PostgresLocation) {
        self.location = location
    }

    func nextPage(limit: Int) throws(LedgerError) -> [QueuedRecord] {
        let session: PostgresSession
        if let open = self.session {
            session = open
        } else {
            session = try PostgresSession(location)
            self.session = session
        }
        let rows = if let last {
            try session.query(LedgerSchema.queuePage, [
                .text(last.provenance.file), .text(last.provenance.member ?? ""), .integer(last.provenance.position),
                .text(last.id.origin.rawValue), .text(last.id.key), .integer(Int64(limit)),
            ])
        } else {
            try session.query(LedgerSchema.queueFirstPage, [.integer(Int64(limit))])
        }
        let page = try rows.map { row throws(LedgerError) in
            guard let origin = QueuedRecord.ID.Origin(rawValue: try row.text(0) ?? "") else {
                throw LedgerError(kind: .corrupt, path: location.description, message: "a queued record has an unknown origin")
            }
            let member = try row.text(3) ?? ""
            return QueuedRecord(
                id: QueuedRecord.ID(origin: origin, key: try row.text(1) ?? ""),
                provenance: Provenance(file: try row.text(2) ?? "", member: member.isEmpty ? nil : member,
                                       position: try row.integer(4) ?? 0),
                payload: CompressedPayload(bytes: try row.bytes(5) ?? [], dictionaryId: try row.integer(6) ?? 0))
        }
        last = page.last ?? last
        return page
    }
}

import Facts
import Ingest

extension SQLiteLedger {
    /// Large transactions: every commit appends each page it changed to the WAL, and inserts land all over the
    /// ledger's B-trees (keyed by hashes), so each commit rewrites about the whole facts tree once it is larger
    /// than the page cache, and the number of commits times the ledger's size made a 5 x larger ingest take far
    /// more than 5 x the time. With the transaction's facts staged and merged in key order
    /// (``insertPendingFacts()``), 400,000 records per transaction instead of 100,000 took the 5 x bench ingest
    /// from 112 s to 99 s (system time 31 s to 15 s) and left the 1 x ingest as it was. Bounded, so that a killed
    /// run redoes at most this much; the WAL grows to about the pages one transaction touches.
    public var recordsPerTransaction: Int { 400_000 }

    public func write(_ writes: [LedgerWrite], dequeuing dequeued: [QueuedRecord.ID]) throws(LedgerError) -> [Bool] {
        // Queued records of this batch whose old rows are still their keys' rows (SQLiteLedger+Reprocess.swift):
        // the first write of each key overwrites its old row in place; those the batch writes no record for (now
        // quarantined) are deleted. The others leave the queue after the writes.
        var claimed: Set<String> = []
        var unclaimed: [QueuedRecord.ID] = []
        for id in dequeued {
            if id.origin == .record, try claimQueuedRecord(id.key) { claimed.insert(id.key) } else { unclaimed.append(id) }
        }
        // Outside a reprocess no record is queued: one look per batch spares a statement per record.
        let anyRecordQueued = try anyRecordQueued()
        var isNew: [Bool] = []
        isNew.reserveCapacity(writes.count)
        for write in writes {
            switch write {
            case .record(let record, let facts):
                var replacing = claimed.remove(record.dedupKey) != nil
                if !replacing && anyRecordQueued { replacing = try stashQueuedRecord(record.dedupKey) }
                isNew.append(try store(record, keyedFacts: facts, replacingOldRow: replacing))
            case .quarantine(let entry): isNew.append(try quarantine(entry))
            }
        }
        for key in claimed { try deleteRecord(key) }
        for id in unclaimed { try dequeue(id) }
        return isNew
    }

    private func deleteRecord(_ key: String) throws(LedgerError) {
        let delete = try prepared(LedgerSchema.deleteRecord)
        try delete.bind(1, key)
        try delete.run()
    }

    /// Stores one used or excluded record and its facts (see ``write(_:dequeuing:)``); `false` for a duplicate.
    /// Outside ``write(_:dequeuing:)`` only in tests: it skips the reprocess queue's claim and stash.
    func store(_ record: StoredRecord, keyedFacts facts: [KeyedFact]) throws(LedgerError) -> Bool {
        try store(record, keyedFacts: facts, replacingOldRow: false)
    }

    /// ``store(_:keyedFacts:)``; with `replacingOldRow`, the record's key has its old row from before a reprocess
    /// (or a row whose old columns were just stashed), which is overwritten as if it had been deleted first. The
    /// payload of a queued record is the old row's, so the row keeps its size and SQLite rewrites it in place,
    /// leaving its unchanged overflow pages alone: a delete and insert of every record made a reprocess slower
    /// than the ingest.
    private func store(_ record: StoredRecord, keyedFacts facts: [KeyedFact],
                       replacingOldRow: Bool) throws(LedgerError) -> Bool {
        let provenance = record.provenance
        let insert = try prepared(replacingOldRow ? LedgerSchema.replaceRecord : LedgerSchema.insertRecord)
        try insert.bind(1, record.dedupKey)
        try insert.bind(2, record.source.rawValue)
        switch record.outcome {
        case .used:
            try insert.bind(3, "used")
        case .excluded(let reason):
            try insert.bind(3, "excluded")
            try insert.bind(4, reason.rawValue)
        }
        try insert.bind(5, provenance.file)
        try insert.bind(6, provenance.member ?? "")
        try insert.bind(7, provenance.position)
        try insert.bind(8, record.receivedAt)
        try insert.bind(9, blob: record.payload.bytes[...])
        try insert.bind(10, record.payload.dictionaryId)
        try insert.bind(11, record.rulesVersion)
        try insert.bind(12, record.bucket)
        try insert.bind(13, record.source.platform.rawValue)
        try insert.bind(14, record.subject)
        try insert.bind(15, record.flags.rawValue)
        try insert.bind(16, record.run)
        try insert.run()
        let isNew = replacingOldRow || insert.changes > 0
        if !isNew, !record.flags.isEmpty {
            let flags = try prepared(LedgerSchema.addRecordFlags)
            try flags.bind(1, record.flags.rawValue)
            try flags.bind(2, record.dedupKey)
            try flags.bind(3, record.flags.rawValue)
            try flags.run()
        }
        if !isNew {
            let move = try prepared(LedgerSchema.moveRecordProvenance)
            try move.bind(1, provenance.file)
            try move.bind(2, provenance.member ?? "")
            try move.bind(3, provenance.position)
            try move.bind(4, record.dedupKey)
            try move.bind(5, provenance.file)
            try move.bind(6, provenance.member ?? "")
            try move.bind(7, provenance.position)
            try move.run()
            let keep = try prepared(LedgerSchema.keepEarliestCopy)
            try keep.bind(1, record.receivedAt)
            try keep.bind(2, blob: record.payload.bytes[...])
            try keep.bind(3, record.payload.dictionaryId)
            try keep.bind(4, record.dedupKey)
            try keep.bind(5, record.receivedAt)
            try keep.bind(6, record.receivedAt)
            try keep.run()
        }
        if !facts.isEmpty { try insertFacts(facts, statedBy: record.dedupKey) }
        for part in record.parts { try insertPart(part) }
        return isNew
    }

    /// A part of a used record; a copy of the record read at a smaller provenance moves the part there.
    private func insertPart(_ entry: QuarantineEntry) throws(LedgerError) {
        let statement = try prepared(LedgerSchema.insertPart)
        try bindQuarantineColumns(of: entry, to: statement)
        try statement.bind(11, entry.part ?? "")
        try statement.run()
    }

    /// Quarantines one record; `false` when that record was quarantined from that place before.
    public func quarantine(_ entry: QuarantineEntry) throws(LedgerError) -> Bool {
        let statement = try prepared(LedgerSchema.insertQuarantine)
        try bindQuarantineColumns(of: entry, to: statement)
        try statement.run()
        return statement.changes > 0
    }

    /// Binds the ten columns `quarantine` and `record_parts` share, in the order their inserts name them.
    private func bindQuarantineColumns(of entry: QuarantineEntry, to statement: SQLiteStatement) throws(LedgerError) {
        try statement.bind(1, entry.key)
        try statement.bind(2, entry.reason)
        try statement.bind(3, entry.detail)
        try statement.bind(4, entry.provenance.file)
        try statement.bind(5, entry.provenance.member ?? "")
        try statement.bind(6, entry.provenance.position)
        try statement.bind(7, blob: entry.payload.bytes[...])
        try statement.bind(8, entry.rawSize)
        try statement.bind(9, entry.payload.dictionaryId)
        try statement.bind(10, entry.rulesVersion)
    }

    /// Writes a record's facts: at once outside a transaction; inside one, into the connection's stage
    /// (``createStage``), from which ``insertPendingFacts()`` inserts them in bucket order.
    private func insertFacts(_ facts: [KeyedFact], statedBy record: String) throws(LedgerError) {
        let statement = try prepared(inTransaction ? Self.stageStatement : LedgerSchema.insertFact)
        try facts.withUnsafeBufferPointer { (facts) throws(LedgerError) in
            for index in facts.indices {
                statement.reset()
                let fact = facts.baseAddress.unsafelyUnwrapped + index
                if inTransaction {
                    guard statedFacts.admits(fact.pointee.key, observedAt: fact.pointee.fact.observedAt) else { continue }
                    try statement.bind(16, Self.stagePlace(of: fact))
                }
                try insertNow(fact, statedBy: record, using: statement)
                // Counted as each one is staged, so that a statement failing half-way leaves none uncounted.
                if inTransaction { pendingFactCount += 1 }
            }
        }
        if pendingFactCount >= pendingFactsLimit { try insertPendingFacts() }
    }

    /// The stage of a transaction's facts: a table of the connection's temporary database, which SQLite keeps in
    /// a file of its own (its pages in the system's file cache, not in this process) and drops with the
    /// connection. Its columns are those of ``LedgerSchema/insertFact`` in the order of its values, then the
    /// fact's `place` (``stagePlace(of:)``).
    static let createStage =
        "CREATE TEMP TABLE IF NOT EXISTS facts_stage (\(LedgerSchema.insertedFactColumns), place)"

    /// The order a staged fact is merged in: by bucket, then platform (apple before google, as the facts' key
    /// orders them), as one integer, which SQLite's sorter compares without reading the rows. A bucket's facts
    /// are a few dozen pages of the facts tree, which stay in cache while it is merged, so the order within it
    /// does not matter (nor does it for the result).
    static func stagePlace(of fact: UnsafePointer<KeyedFact>) -> Int64 {
        Int64(fact.pointee.bucket) << 1 | (fact.pointee.fact.platform == .apple ? 0 : 1)
    }

    static let stageStatement = "INSERT INTO temp.facts_stage VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"

    /// Inserts the staged facts in the order of their places, in one statement: SQLite sorts them (in a bounded
    /// memory, spilling to its temporary files) and walks the facts B-tree once.
    static let mergeStage = LedgerSchema.insertFact(
        from: "SELECT \(LedgerSchema.insertedFactColumns) FROM temp.facts_stage WHERE true ORDER BY place")

    static let clearStage = "DELETE FROM temp.facts_stage"

    /// Inserts the facts staged in the open transaction (see ``createStage``). A fact's key leads with its
    /// bucket, a hash, so facts inserted as records come land all over the facts B-tree: once that tree outgrows
    /// the page cache, nearly every insert read a page back and wrote a spilled one to the WAL, and fact inserts
    /// were half of the writing thread's time. In bucket order, each page is visited once per merge and stays in
    /// cache while it fills. The merge rule (``LedgerSchema/insertFact``) does not depend on the order.
    func insertPendingFacts() throws(LedgerError) {
        guard pendingFactCount > 0 else { return }
        try prepared(Self.mergeStage).run()
        try prepared(Self.clearStage).run()
        pendingFactCount = 0
    }

    /// ``insertPendingFacts()`` when `sql` reads or writes the facts table.
    func insertPendingFacts(before sql: String) throws(LedgerError) {
        if pendingFactCount > 0, sql.contains("facts") { try insertPendingFacts() }
    }

    /// Inserts one fact with `statement`, ``LedgerSchema/insertFact`` ready for a new row; `keyed` is read where
    /// it lies, field by field (see ``insertPendingFacts()``).
    private func insertNow(_ keyed: UnsafePointer<KeyedFact>, statedBy record: String,
                           using statement: SQLiteStatement) throws(LedgerError) {
        try statement.bind(1, blob: keyed.pointee.key.bytes[...])
        try statement.bind(2, keyed.pointee.fact.platform.rawValue)
        try statement.bind(3, keyed.pointee.fact.subject)
        try statement.bind(4, keyed.pointee.fact.kind.rawValue)
        try statement.bind(5, keyed.pointee.fact.at)
        try statement.bind(6, keyed.pointee.fact.observedAt)
        try statement.bind(7, keyed.pointee.fact.ref)
        try statement.bind(8, keyed.pointee.fact.detail)
        try statement.bind(9, keyed.pointee.fact.productId)
        try statement.bind(10, keyed.pointee.fact.end)
        try statement.bind(11, keyed.pointee.fact.amountMicros)
        try statement.bind(12, keyed.pointee.fact.currency)
        try statement.bind(13, keyed.pointee.fact.flags.rawValue)
        try statement.bind(14, record)
        try statement.bind(15, keyed.pointee.bucket)
        try statement.run()
    }
}

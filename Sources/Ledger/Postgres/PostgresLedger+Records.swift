import Facts
import Ingest

extension PostgresLedger {
    /// One batch per transaction: each transaction takes its rows' locks in key order, table by table, so that
    /// several ingests writing overlapping records never wait on each other in a cycle; and a batch moves through
    /// `COPY` in one round trip, where a row at a time would cost one round trip each.
    public var recordsPerTransaction: Int { 1_024 }

    /// Copies the batch into the session's staging tables, then moves it into the ledger's tables with one
    /// statement per table, each reading the staged rows in key order and keeping the set semantics of
    /// ``SQLiteLedger/store(_:keyedFacts:)`` (first copy inserted, smallest provenance, copy received first,
    /// earliest statement of each fact).
    public func write(_ writes: [LedgerWrite], dequeuing dequeued: [QueuedRecord.ID]) throws(LedgerError) -> [Bool] {
        var records = PostgresCopyRows()
        var facts = PostgresCopyRows()
        var quarantine = PostgresCopyRows()
        var parts = PostgresCopyRows()
        var queue = PostgresCopyRows()
        var recordKeys: [String] = []
        for (sequence, write) in writes.enumerated() {
            switch write {
            case .record(let record, let keyed):
                let outcome: (String, String?)
                switch record.outcome {
                case .used: outcome = ("used", nil)
                case .excluded(let reason): outcome = ("excluded", reason.rawValue)
                }
                records.row([.integer(Int64(sequence)), .text(record.dedupKey), .text(record.source.rawValue),
                             .text(outcome.0), .text(outcome.1), .text(record.provenance.file),
                             .text(record.provenance.member ?? ""), .integer(record.provenance.position),
                             .integer(record.receivedAt), .bytes(record.payload.bytes),
                             .integer(record.payload.dictionaryId), .integer(record.rulesVersion),
                             .integer(Int64(record.bucket)), .text(record.source.platform.rawValue),
                             .text(record.subject), .integer(record.flags.rawValue), .text(record.run)])
                recordKeys.append(record.dedupKey)
                for part in record.parts { parts.row(quarantineRow(part, sequence: sequence)) }
                for fact in keyed where statedFacts.admits(fact.key, observedAt: fact.fact.observedAt) {
                    let value = fact.fact
                    facts.row([.bytes(fact.key.bytes), .text(value.platform.rawValue), .text(value.subject),
                               .text(value.kind.rawValue), .integer(value.at), .integer(value.observedAt),
                               .text(value.ref), .text(value.detail), .text(value.productId), .integer(value.end),
                               .integer(value.amountMicros), .text(value.currency), .integer(Int64(value.flags.rawValue)),
                               .text(record.dedupKey), .integer(Int64(fact.bucket))])
                }
            case .quarantine(let entry):
                quarantine.row(quarantineRow(entry, sequence: sequence))
            }
        }
        for id in dequeued { queue.row([.text(id.origin.rawValue), .text(id.key)]) }
        let staged = (records: records.bytes, facts: facts.bytes, quarantine: quarantine.bytes, parts: parts.bytes,
                      queue: queue.bytes)
        let (newRecords, newQuarantine) = try run { session throws(LedgerError) -> (Set<String>, Set<String>) in
            var newRecords: Set<String> = []
            var newQuarantine: Set<String> = []
            if !staged.queue.isEmpty {
                try session.copy(into: "stage_dequeue", columns: ["origin", "key"], rows: staged.queue)
                try session.query(PostgresStaging.claimQueuedRecords)
            }
            if !staged.records.isEmpty {
                try session.copy(into: "stage_records", columns: PostgresStaging.recordColumns, rows: staged.records)
                try session.query(PostgresStaging.stashQueuedRecords)
                for row in try session.query(PostgresStaging.insertRecords) { newRecords.insert(try row.text(0) ?? "") }
                // Only the keys with a copy: a key staged twice, or one the ledger had. A key staged once and
                // inserted is its only copy, which the merge would leave as it is: over the whole batch, the merge
                // took 3.1 to 3.5 of the server's 15 s of the bench ingest, for about 13 copies per batch.
                let copies = PostgresStaging.keysWithCopies(recordKeys, inserted: newRecords)
                if !copies.isEmpty {
                    try session.query(PostgresStaging.mergeCopies(of: copies.count), copies.map { .text($0) })
                }
            }
            if !staged.facts.isEmpty {
                try session.copy(into: "stage_facts", columns: PostgresStaging.factColumns, rows: staged.facts)
                try session.query(PostgresStaging.insertFacts)
            }
            if !staged.quarantine.isEmpty {
                try session.copy(into: "stage_quarantine", columns: PostgresStaging.quarantineColumns, rows: staged.quarantine)
                for row in try session.query(PostgresStaging.insertQuarantine) { newQuarantine.insert(try row.text(0) ?? "") }
            }
            if !staged.parts.isEmpty {
                try session.copy(into: "stage_quarantine", columns: PostgresStaging.quarantineColumns, rows: staged.parts)
                try session.query(PostgresStaging.insertParts)
            }
            if !staged.queue.isEmpty { try session.query(PostgresStaging.dequeue) }
            // A transaction may hold several batches (the last records of several small files): each batch
            // empties the staging tables after itself; the commit then resets their storage.
            if !staged.records.isEmpty { try session.query("DELETE FROM stage_records") }
            if !staged.facts.isEmpty { try session.query("DELETE FROM stage_facts") }
            if !staged.quarantine.isEmpty || !staged.parts.isEmpty { try session.query("DELETE FROM stage_quarantine") }
            if !staged.queue.isEmpty { try session.query("DELETE FROM stage_dequeue") }
            return (newRecords, newQuarantine)
        }
        // New: the first write of a key that this batch inserted, as SQLite's row-at-a-time answer would be.
        var seen: Set<String> = []
        return writes.map { write in
            switch write {
            case .record(let record, _):
                newRecords.contains(record.dedupKey) && seen.insert("r" + record.dedupKey).inserted
            case .quarantine(let entry):
                newQuarantine.contains(entry.key) && seen.insert("q" + entry.key).inserted
            }
        }
    }

    /// A quarantine row for `COPY`: a whole record, or a part of a used one.
    private func quarantineRow(_ entry: QuarantineEntry, sequence: Int) -> [SQLValue] {
        [.integer(Int64(sequence)), .text(entry.key), .text(entry.reason), .text(entry.detail),
         .text(entry.provenance.file), .text(entry.provenance.member ?? ""), .integer(entry.provenance.position),
         .bytes(entry.payload.bytes), .integer(Int64(entry.rawSize)), .integer(entry.payload.dictionaryId),
         .integer(entry.rulesVersion), .text(entry.part ?? "")]
    }

    /// The session's staging tables (temporary: each connection has its own).
    func createStagingTables() throws(LedgerError) {
        for statement in PostgresStaging.create { try session.query(statement) }
    }
}

/// The staging tables of ``PostgresLedger/write(_:dequeuing:)`` and the statements that move their rows on. The
/// tables empty themselves at every commit (a batch is one transaction): cheaper than a `TRUNCATE` per batch,
/// which gives a table new files each time.
enum PostgresStaging {
    static let create = [
        """
        CREATE TEMP TABLE IF NOT EXISTS stage_records (
            seq BIGINT, dedup_key TEXT COLLATE "C", source TEXT, outcome TEXT, reason TEXT, file TEXT COLLATE "C",
            member TEXT COLLATE "C", position BIGINT, received_at BIGINT, payload BYTEA, dictionary BIGINT,
            rules_version BIGINT, bucket BIGINT, platform TEXT COLLATE "C", subject TEXT COLLATE "C", flags BIGINT,
            run TEXT) ON COMMIT DELETE ROWS
        """,
        """
        CREATE TEMP TABLE IF NOT EXISTS stage_facts (
            fact_key BYTEA, platform TEXT COLLATE "C", subject TEXT COLLATE "C", kind TEXT COLLATE "C", at BIGINT,
            observed_at BIGINT, ref TEXT COLLATE "C", detail TEXT COLLATE "C", product_id TEXT COLLATE "C",
            end_at BIGINT, amount_micros BIGINT, currency TEXT COLLATE "C", flags BIGINT, record TEXT COLLATE "C",
            bucket BIGINT) ON COMMIT DELETE ROWS
        """,
        """
        CREATE TEMP TABLE IF NOT EXISTS stage_quarantine (
            seq BIGINT, key TEXT COLLATE "C", reason TEXT, detail TEXT, file TEXT COLLATE "C",
            member TEXT COLLATE "C", position BIGINT, raw BYTEA, raw_size BIGINT, dictionary BIGINT,
            rules_version BIGINT, part TEXT COLLATE "C") ON COMMIT DELETE ROWS
        """,
        "CREATE TEMP TABLE IF NOT EXISTS stage_dequeue (origin TEXT COLLATE \"C\", key TEXT COLLATE \"C\") ON COMMIT DELETE ROWS",
    ]

    static let recordColumns = ["seq", "dedup_key", "source", "outcome", "reason", "file", "member", "position",
                                "received_at", "payload", "dictionary", "rules_version", "bucket", "platform",
                                "subject", "flags", "run"]
    static let factColumns = ["fact_key", "platform", "subject", "kind", "at", "observed_at", "ref", "detail",
                              "product_id", "end_at", "amount_micros", "currency", "flags", "record", "bucket"]
    static let quarantineColumns = ["seq", "key", "reason", "detail", "file", "member", "position", "raw", "raw_size",
                                    "dictionary", "rules_version", "part"]

    /// The first copy of each key in batch order; keys already stored are left alone; the new keys come back.
    static let insertRecords = """
        INSERT INTO records (dedup_key, source, outcome, reason, file, member, position, received_at, payload,
            dictionary, rules_version, bucket, platform, subject, flags, run)
        SELECT DISTINCT ON (dedup_key) dedup_key, source, outcome, reason, file, member, position, received_at,
            payload, dictionary, rules_version, bucket, platform, subject, flags, run
        FROM stage_records ORDER BY dedup_key, seq
        ON CONFLICT (dedup_key) DO NOTHING
        RETURNING dedup_key
        """

    /// What every copy of a stored record changes in its row, in one pass over the staged rows of the batch's
    /// `keys` keys with copies (``keysWithCopies(_:inserted:)``, bound as a list; one statement: each is a round
    /// trip and a plan): the smallest provenance of the copies where smaller than the stored one; the copy
    /// received first (none counts as first; then batch order) where earlier than the stored; the flags of every
    /// copy OR-ed in. Each is the same for any order of the copies.
    static func mergeCopies(of keys: Int) -> String {
        let keys = Array(repeating: "?", count: keys).joined(separator: ", ")
        return """
        WITH copies AS (SELECT * FROM stage_records WHERE dedup_key IN (\(keys)))
        UPDATE records r SET
            file = CASE WHEN p.smaller THEN p.file ELSE r.file END,
            member = CASE WHEN p.smaller THEN p.member ELSE r.member END,
            position = CASE WHEN p.smaller THEN p.position ELSE r.position END,
            received_at = CASE WHEN p.earlier THEN p.received_at ELSE r.received_at END,
            payload = CASE WHEN p.earlier THEN p.payload ELSE r.payload END,
            dictionary = CASE WHEN p.earlier THEN p.dictionary ELSE r.dictionary END,
            flags = r.flags | p.flags
        FROM (
            SELECT s.dedup_key, s.file, s.member, s.position, e.received_at, e.payload, e.dictionary, f.flags,
                (t.file, t.member, t.position) > (s.file, s.member, s.position) AS smaller,
                t.received_at IS NOT NULL AND (e.received_at IS NULL OR e.received_at < t.received_at) AS earlier
            FROM (SELECT DISTINCT ON (dedup_key) dedup_key, file, member, position FROM copies
                  ORDER BY dedup_key, file, member, position) s
            JOIN (SELECT DISTINCT ON (dedup_key) dedup_key, received_at, payload, dictionary FROM copies
                  ORDER BY dedup_key, received_at NULLS FIRST, seq) e ON e.dedup_key = s.dedup_key
            JOIN (SELECT dedup_key, bit_or(flags) AS flags FROM copies GROUP BY dedup_key) f
                ON f.dedup_key = s.dedup_key
            JOIN records t ON t.dedup_key = s.dedup_key
        ) p
        WHERE r.dedup_key = p.dedup_key AND (p.smaller OR p.earlier OR (r.flags | p.flags) <> r.flags)
        """
    }

    /// The keys among `keys` (the batch's records) that have a copy, in the order first met: staged more than
    /// once, or not `inserted` (the ledger had the key). The others are their own only copy.
    static func keysWithCopies(_ keys: [String], inserted: Set<String>) -> [String] {
        var seen: Set<String> = []
        var listed: Set<String> = []
        var copies: [String] = []
        for key in keys where !seen.insert(key).inserted || !inserted.contains(key) {
            if listed.insert(key).inserted { copies.append(key) }
        }
        return copies
    }

    /// Each fact once, its earliest statement (and that statement's record) winning, as in the set semantics.
    static let insertFacts = LedgerSchema.insertFact(from: """
        SELECT DISTINCT ON (bucket, platform, subject, fact_key) \(LedgerSchema.insertedFactColumns)
        FROM stage_facts ORDER BY bucket, platform, subject, fact_key, observed_at, record
        """)

    static let insertQuarantine = """
        INSERT INTO quarantine (key, reason, detail, file, member, position, raw, raw_size, dictionary, rules_version)
        SELECT DISTINCT ON (key) key, reason, detail, file, member, position, raw, raw_size, dictionary, rules_version
        FROM stage_quarantine WHERE part = '' ORDER BY key, seq
        ON CONFLICT (key) DO NOTHING
        RETURNING key
        """

    /// Parts of used records: one row per (record, path), at the smallest provenance of the record's copies.
    static let insertParts = """
        INSERT INTO quarantine (key, reason, detail, file, member, position, raw, raw_size, dictionary, rules_version,
            part)
        SELECT DISTINCT ON (key) key, reason, detail, file, member, position, raw, raw_size, dictionary,
            rules_version, part
        FROM stage_quarantine WHERE part <> '' ORDER BY key, file, member, position
        ON CONFLICT (key) DO UPDATE SET file = excluded.file, member = excluded.member, position = excluded.position
        WHERE (excluded.file, excluded.member, excluded.position) < (quarantine.file, quarantine.member, quarantine.position)
        """

    /// Claims every queued record of the batch whose old row is still in `records` (its queue row has no payload
    /// of its own): the queue row and the old row go, and the record is written anew, as if every old row had
    /// been deleted when the reprocess began.
    static let claimQueuedRecords = """
        WITH claimed AS (
            DELETE FROM reprocess_queue q USING stage_dequeue d
            WHERE d.origin = 'record' AND q.origin = 'record' AND q.key = d.key AND q.payload IS NULL
            RETURNING q.key
        )
        DELETE FROM records r USING claimed c WHERE r.dedup_key = c.key
        """

    /// For every record of the batch with the key of a queued record whose old row is still in `records` (a
    /// released quarantined copy, a file read again, written first): the old row's payload moves to the queue
    /// row, which is read later, and the old row goes, so the new write is the key's first.
    static let stashQueuedRecords = """
        WITH stashed AS (
            UPDATE reprocess_queue q SET payload = r.payload, dictionary = r.dictionary
            FROM records r
            WHERE q.origin = 'record' AND q.payload IS NULL AND r.dedup_key = q.key
                AND q.key IN (SELECT dedup_key FROM stage_records)
            RETURNING q.key
        )
        DELETE FROM records r USING stashed s WHERE r.dedup_key = s.key
        """

    static let dequeue = """
        DELETE FROM reprocess_queue q USING stage_dequeue d WHERE q.origin = d.origin AND q.key = d.key
        """

}

/// Rows in `COPY … FROM STDIN` text format: columns separated by tabs, rows by newlines, `\N` for NULL,
/// backslash escapes in text, `\\x` and hex digits for bytes.
struct PostgresCopyRows {
    private(set) var bytes: [UInt8] = []

    mutating func row(_ values: [SQLValue]) {
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(0x09) }
            switch value {
            case .text(nil), .integer(nil), .bytes(nil):
                bytes += [0x5C, 0x4E]
            case .text(let text?):
                for byte in text.utf8 {
                    switch byte {
                    case 0x5C: bytes += [0x5C, 0x5C]
                    case 0x09: bytes += [0x5C, 0x74]
                    case 0x0A: bytes += [0x5C, 0x6E]
                    case 0x0D: bytes += [0x5C, 0x72]
                    // PostgreSQL text cannot hold U+0000: it is stored as U+FFFD.
                    case 0x00: bytes += [0xEF, 0xBF, 0xBD]
                    default: bytes.append(byte)
                    }
                }
            case .integer(let integer?):
                bytes += Array(String(integer).utf8)
            case .bytes(let data?):
                bytes += [0x5C, 0x5C, 0x78]
                let digits = Array("0123456789abcdef".utf8)
                for byte in data {
                    bytes.append(digits[Int(byte >> 4)])
                    bytes.append(digits[Int(byte & 0x0F)])
                }
            }
        }
        bytes.append(0x0A)
    }
}

/// Every SQL statement the ledger runs, one statement per constant; the tables themselves are made by
/// ``LedgerMigrations``.
///
/// Portability: the SQL sticks to what PostgreSQL also accepts (`INSERT ... ON CONFLICT`, row values,
/// `WITH`, `CASE`), so that both engines run the same statements. Text columns compare byte-wise (SQLite's
/// BINARY collation; PostgreSQL's `COLLATE "C"`), which is what makes the report's order deterministic.
/// A missing archive member is stored as `''`, not NULL, so that provenance compares as a plain row value.
enum LedgerSchema {
    // MARK: manifest

    static let fileState = "SELECT size, sha256, state FROM files WHERE path = ?"

    /// Starts (or restarts) reading a file; keeps the counts of its previous read until this read finishes.
    static let beginFile = """
        INSERT INTO files (path, size, sha256, state, ingested_at) VALUES (?, ?, ?, 'reading', ?)
        ON CONFLICT (path) DO UPDATE SET
            size = excluded.size, sha256 = excluded.sha256, state = 'reading', ingested_at = excluded.ingested_at
        """

    /// Mid-file commit: the records committed so far come from a prefix of this read; counting the larger of
    /// this prefix and the previous complete read keeps `status`'s sums consistent if the run is killed now.
    static let fileProgress = """
        UPDATE files SET read = CASE WHEN read < ? THEN ? ELSE read END WHERE path = ?
        """

    /// The read is complete: its counts, its damage, and the end of the claim of the process that read it.
    static let finishFile = """
        UPDATE files SET state = 'done', read = ?, used = ?, duplicate = ?, excluded = ?, quarantined = ?,
            damage_offset = ?, damage_reason = ?, ingested_at = ?, lease_owner = NULL, lease_until = NULL
        WHERE path = ?
        """

    static let listFiles = """
        SELECT path, size, sha256, state, read, used, duplicate, excluded, quarantined, damage_offset,
            damage_reason, ingested_at
        FROM files ORDER BY path
        """

    /// Done files by SHA-256, for recognising a copy of an archive under another path.
    static let doneFiles = "SELECT path, size, sha256 FROM files WHERE state = 'done' ORDER BY path"

    /// A file a reprocess could not read again: no counts, the reason as its damage, `reading` until read.
    static let markUnreadable = """
        UPDATE files SET state = 'reading', read = 0, used = 0, duplicate = 0, excluded = 0, quarantined = 0,
            damage_offset = 0, damage_reason = ?
        WHERE path = ?
        """

    static let filesToReread = "SELECT path, size, sha256 FROM files WHERE state = 'reading' ORDER BY path"

    // MARK: file claims (a ledger shared by several ingests)

    /// Another path with the same bytes, read or being read: the file is a copy of it.
    static let copyOf = """
        SELECT path FROM files
        WHERE sha256 = ? AND size = ? AND path <> ? AND (state = 'done' OR lease_owner IS NOT NULL)
        ORDER BY path LIMIT 1
        """

    /// A file no process has seen: created claimed by this one.
    static let claimNewFile = """
        INSERT INTO files (path, size, sha256, state, ingested_at, lease_owner, lease_until)
        VALUES (?, ?, ?, 'reading', ?, ?, ?)
        ON CONFLICT (path) DO NOTHING
        RETURNING path
        """

    /// The file's row as last committed, read without waiting for a process that holds it.
    static let fileClaimState = "SELECT size, sha256, state, lease_owner, lease_until FROM files WHERE path = ?"

    /// ``fileClaimState``'s row, locked, unless another process holds it this moment (then no row: it is being
    /// claimed or written).
    static let lockFileRow = fileClaimState + " FOR UPDATE SKIP LOCKED"

    static let takeLease = "UPDATE files SET lease_owner = ?, lease_until = ? WHERE path = ?"

    /// The process's claims, renewed without waiting: a row its own store holds locked (writing that file this
    /// moment) is skipped and renewed next time. Waiting for it instead locked the other rows for as long, and the
    /// store then waited for the renewal in turn (a deadlock, or a 28-second stall, in every run).
    static let renewLeases = """
        UPDATE files SET lease_until = ?
        WHERE path IN (SELECT path FROM files WHERE lease_owner = ? AND state = 'reading' FOR UPDATE SKIP LOCKED)
        """

    // MARK: ledger identity and rules

    static let metaValue = "SELECT value FROM ledger_meta WHERE key = ?"

    static let setMeta = """
        INSERT INTO ledger_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value
        """

    static let deleteMeta = "DELETE FROM ledger_meta WHERE key = ?"

    static let anyRecordWithoutPayload = "SELECT 1 FROM records WHERE payload IS NULL LIMIT 1"

    static let anyRecord = "SELECT 1 FROM records UNION ALL SELECT 1 FROM quarantine LIMIT 1"

    // MARK: payload dictionaries

    static let listDictionaries = "SELECT id, bytes FROM payload_dictionaries ORDER BY id"

    /// The next dictionary; when another writer stored one under the same id at the same moment, theirs stays.
    /// (`WHERE true`: SQLite would read the `ON` of the upsert as a join's without a `WHERE`.)
    static let insertDictionary = """
        INSERT INTO payload_dictionaries (id, bytes, created_at)
        SELECT COALESCE(MAX(id), 0) + 1, ?, ? FROM payload_dictionaries WHERE true
        ON CONFLICT (id) DO NOTHING
        """

    static let lastDictionary = "SELECT id, bytes FROM payload_dictionaries ORDER BY id DESC LIMIT 1"
    static let skipFile = """
        INSERT INTO skipped_files (path, reason, skipped_at) VALUES (?, ?, ?)
        ON CONFLICT (path) DO UPDATE SET reason = excluded.reason, skipped_at = excluded.skipped_at
        """

    static let unskipFile = "DELETE FROM skipped_files WHERE path = ?"

    static let listSkipped = "SELECT path, reason FROM skipped_files ORDER BY path"

    // MARK: records, facts, quarantine

    /// A new record is inserted; an existing one is left alone (`changes` tells which happened), in one
    /// lookup of the key instead of a SELECT and then an INSERT.
    static let insertRecord = """
        INSERT INTO records (dedup_key, source, outcome, reason, file, member, position, received_at, payload,
            dictionary, rules_version, bucket, platform, subject, flags, run)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (dedup_key) DO NOTHING
        """

    /// ``insertRecord`` over a queued record's old row (reprocess), every column but the key set anew; the
    /// parameters are numbered as ``insertRecord``'s.
    static let replaceRecord = """
        UPDATE records SET source = ?2, outcome = ?3, reason = ?4, file = ?5, member = ?6, position = ?7,
            received_at = ?8, payload = ?9, dictionary = ?10, rules_version = ?11, bucket = ?12, platform = ?13,
            subject = ?14, flags = ?15, run = ?16
        WHERE dedup_key = ?1
        """

    /// A copy of a stored record adds its flags (OR: the same for any order of the copies).
    static let addRecordFlags = """
        UPDATE records SET flags = flags | ? WHERE dedup_key = ? AND (flags | ?) <> flags
        """

    /// A duplicate seen at a smaller provenance moves the record's provenance there (canonical provenance).
    static let moveRecordProvenance = """
        UPDATE records SET file = ?, member = ?, position = ?
        WHERE dedup_key = ? AND (file, member, position) > (?, ?, ?)
        """

    /// The payload kept is the copy received first (no `received_at` counts as earliest: its facts are dated
    /// from the payload itself, which precedes any logging of it), so that a reprocess dates facts as the
    /// earliest copy did. Copies received at the same instant translate alike (the dedup key covers everything
    /// else a translator reads), so the first one stored stays.
    static let keepEarliestCopy = """
        UPDATE records SET received_at = ?, payload = ?, dictionary = ?
        WHERE dedup_key = ? AND received_at IS NOT NULL AND (? IS NULL OR ? < received_at)
        """

    /// The set semantics: an existing fact keeps the earliest `observed_at`, and the record that first stated it
    /// (the one of that earliest statement; of several, the smallest dedup key), whatever the order of ingest.
    static let insertFact = insertFact(from: "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")

    /// The columns ``insertFact`` writes, in the order of its values.
    static let insertedFactColumns = """
        fact_key, platform, subject, kind, at, observed_at, ref, detail, product_id, end_at, amount_micros, currency,
            flags, record, bucket
        """

    /// ``insertFact`` of the rows `source` gives (`VALUES` or a `SELECT` of ``insertedFactColumns``).
    static func insertFact(from source: String) -> String {
        """
        INSERT INTO facts (\(insertedFactColumns))
        \(source)
        ON CONFLICT (bucket, platform, subject, fact_key) DO UPDATE SET
            observed_at = excluded.observed_at, record = excluded.record
        WHERE excluded.observed_at < facts.observed_at
            OR (excluded.observed_at = facts.observed_at AND (facts.record IS NULL OR excluded.record < facts.record))
        """
    }

    static let insertQuarantine = """
        INSERT INTO quarantine (key, reason, detail, file, member, position, raw, raw_size, dictionary, rules_version)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (key) DO NOTHING
        """

    /// A part of a used record: one row per (record, path), at the record's smallest provenance.
    static let insertPart = """
        INSERT INTO quarantine (key, reason, detail, file, member, position, raw, raw_size, dictionary, rules_version,
            part)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (key) DO UPDATE SET file = excluded.file, member = excluded.member, position = excluded.position
        WHERE (excluded.file, excluded.member, excluded.position) < (quarantine.file, quarantine.member, quarantine.position)
        """

    // MARK: reprocess

    /// PostgreSQL's queue of a full reprocess: every record by key and provenance only. Its payload stays in
    /// `records` until the record is written again: copying every payload into the queue and back made a
    /// reprocess slower than an ingest. A queued record's row in `records` is its old row exactly while the queue
    /// row's `payload` is NULL. (SQLite queues rowids: `SQLiteLedger+Reprocess.swift`.)
    static let queueRecords = """
        INSERT INTO reprocess_queue (origin, key, file, member, position, payload, dictionary)
        SELECT 'record', dedup_key, file, member, position, NULL, NULL FROM records WHERE payload IS NOT NULL
        """

    static let queueQuarantine = """
        INSERT INTO reprocess_queue (origin, key, file, member, position, payload, dictionary)
        SELECT 'quarantine', key, file, member, position, raw, dictionary FROM quarantine
        WHERE dictionary IS NOT NULL AND part = ''
        """

    /// Files whose quarantined rows were cut to 4096 bytes by the release before payloads were kept.
    static let legacyQuarantineFiles = "SELECT DISTINCT file FROM quarantine WHERE dictionary IS NULL ORDER BY file"

    /// Files of records the release before payloads were kept wrote (no payload): read again from the archive.
    static let payloadlessRecordFiles = "SELECT DISTINCT file FROM records WHERE payload IS NULL ORDER BY file"

    static let deletePayloadlessRecords = "DELETE FROM records WHERE payload IS NULL"
    static let deleteFacts = "DELETE FROM facts"
    static let deleteQueuedQuarantine = "DELETE FROM quarantine WHERE dictionary IS NOT NULL AND part = ''"
    /// Parts of used records: a full reprocess makes them again from their records.
    static let deleteParts = "DELETE FROM quarantine WHERE part <> ''"
    static let deleteLegacyQuarantine = "DELETE FROM quarantine WHERE dictionary IS NULL"

    /// A queued record's old row that is no record any more (SQLite's writer; PostgreSQL deletes in its staging).
    static let deleteRecord = "DELETE FROM records WHERE dedup_key = ?"

    static let setFileReading = "UPDATE files SET state = 'reading' WHERE path = ?"

    /// A page of PostgreSQL's queue in provenance order, each with its payload: the queue row's own, or, while it
    /// has none, its old row's in `records`. (SQLite reads its queue in stored order: `SQLiteLedger+Reprocess.swift`.)
    static let queuePage = """
        SELECT q.origin, q.key, q.file, q.member, q.position,
            COALESCE(q.payload, r.payload), COALESCE(q.dictionary, r.dictionary)
        FROM reprocess_queue q
        LEFT JOIN records r ON q.origin = 'record' AND q.payload IS NULL AND r.dedup_key = q.key
        WHERE (q.file, q.member, q.position, q.origin, q.key) > (?, ?, ?, ?, ?)
        ORDER BY q.file, q.member, q.position, q.origin, q.key
        LIMIT ?
        """

    /// ``queuePage`` from the start of the queue (PostgreSQL).
    static let queueFirstPage = """
        SELECT q.origin, q.key, q.file, q.member, q.position,
            COALESCE(q.payload, r.payload), COALESCE(q.dictionary, r.dictionary)
        FROM reprocess_queue q
        LEFT JOIN records r ON q.origin = 'record' AND q.payload IS NULL AND r.dedup_key = q.key
        ORDER BY q.file, q.member, q.position, q.origin, q.key
        LIMIT ?
        """

    /// A queued record of `reprocess_queue` written again (SQLite's writer; PostgreSQL dequeues in its staging).
    static let dequeue = "DELETE FROM reprocess_queue WHERE origin = ? AND key = ?"

    /// Whether PostgreSQL's queue holds anything (SQLite also asks its rowid list and stash).
    static let anyQueued = "SELECT 1 FROM reprocess_queue LIMIT 1"

    // MARK: statistics

    static let fileTotals = """
        SELECT COUNT(*), CAST(COALESCE(SUM(read), 0) AS BIGINT) FROM files
        """

    /// Where the records ended: by source, outcome, reason and whether their subject is a test purchase's (some
    /// record of the same platform and subject was excluded as `test`; `records_test_subjects` holds them), with
    /// how many had `received_at` in seconds. Every record, the test subjects joined as one set, which PostgreSQL
    /// hashes once (SQLite counts them from ``outcomeRows``).
    static let recordOutcomes = """
        WITH marked AS (
            SELECT DISTINCT platform, subject FROM records
            WHERE outcome = 'excluded' AND reason = 'test' AND subject IS NOT NULL
        )
        SELECT r.source, r.outcome, COALESCE(r.reason, ''), CASE WHEN m.subject IS NULL THEN 0 ELSE 1 END, COUNT(*),
            CAST(SUM(CASE WHEN r.flags & 1 <> 0 THEN 1 ELSE 0 END) AS BIGINT)
        FROM records r
        LEFT JOIN marked m ON m.platform = r.platform AND m.subject = r.subject
        GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        """

    /// ``recordOutcomes`` for the records of one run (PostgreSQL), read through `records_by_run` so that an ingest
    /// counts its own records in the time it took to write them; each record's test subject is probed through
    /// `records_test_subjects`. Not joined to the set: a run's id is new, absent from the server's statistics
    /// until its next `ANALYZE`, so the planner expects one row and rescanned the whole set for each record
    /// (154 s for a run of 195,000 records that the probes count in under a second).
    static let runOutcomes = """
        SELECT r.source, r.outcome, COALESCE(r.reason, ''),
            CASE WHEN r.subject IS NOT NULL AND EXISTS (
                SELECT 1 FROM records t
                WHERE t.outcome = 'excluded' AND t.reason = 'test' AND t.platform = r.platform AND t.subject = r.subject
            ) THEN 1 ELSE 0 END,
            COUNT(*), CAST(SUM(CASE WHEN r.flags & 1 <> 0 THEN 1 ELSE 0 END) AS BIGINT)
        FROM records r
        WHERE r.run = ?
        GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        """

    /// What SQLite counts ``recordOutcomes`` from, in one pass of its own (``SQLiteLedger/outcomeCounts(run:)``):
    /// every record's source, outcome, reason, subject and flags, or one run's (`run = ?`, through
    /// `records_by_run`), in no particular order.
    static let outcomeRows = "SELECT source, outcome, reason, platform, subject, flags FROM records"
    static let runOutcomeRows = outcomeRows + " WHERE run = ?"

    /// The subjects of test purchases, each as often as it has test records (the partial index
    /// `records_test_subjects` holds them all and answers alone).
    static let testSubjects = """
        SELECT platform, subject FROM records
        WHERE outcome = 'excluded' AND reason = 'test' AND platform IS NOT NULL AND subject IS NOT NULL
        """

    /// Whether the subject (platform = ?, subject = ?) is a test purchase's: one probe of `records_test_subjects`.
    static let isTestSubject = """
        SELECT 1 FROM records WHERE outcome = 'excluded' AND reason = 'test' AND platform = ? AND subject = ? LIMIT 1
        """

    /// Records with `received_at` in seconds, and parts of used records quarantined on their own: the partial
    /// indexes `records_in_seconds` and `quarantine_parts` hold them (their conditions are these).
    static let warningCounts = """
        SELECT (SELECT COUNT(*) FROM records WHERE flags & 1 <> 0), (SELECT COUNT(*) FROM quarantine WHERE part <> '')
        """

    /// Pub/Sub messages beyond the first of each `messageId` (keys `msg:<id>:<64 hex>`): id conflicts.
    static let messageIdConflicts = """
        SELECT COUNT(*) - COUNT(DISTINCT \(messageId("dedup_key"))) FROM records
        WHERE dedup_key >= 'msg:' AND dedup_key < 'msg;'
        """

    /// The id conflicts one run (`run` = ?) added: its messages whose `messageId` another record has, of
    /// another run or with a smaller key (the key range finds the id's keys through the index; the equal prefix
    /// keeps out an id that merely starts with this one and a colon). Summed over runs that followed one another,
    /// that is ``messageIdConflicts``; two ingests sharing a ledger at the same time may each count a conflict
    /// between their own messages.
    ///
    /// The search differs by engine (``SQLLedger/searchesConflictsInMessageKeysOnly``). SQLite looks each message's
    /// id up in the key index, bounded by that id; a constant range on the same column as well would be used
    /// instead of the id's (SQLite takes one range per index column), and each message would scan every message
    /// key of the ledger. PostgreSQL plans the search of a large ledger as a hash join, which hashes every
    /// record it searches: `messagesOnly` keeps those to the message keys.
    static func runMessageIdConflicts(messagesOnly: Bool) -> String {
        """
        SELECT COUNT(*) FROM records r
        WHERE r.run = ? AND r.dedup_key >= 'msg:' AND r.dedup_key < 'msg;'
            AND EXISTS (
                SELECT 1 FROM records o
                WHERE o.dedup_key >= \(messageId("r.dedup_key"))
                    AND o.dedup_key < \(messageId("r.dedup_key")) || 'g'
                    AND \(messagesOnly ? "o.dedup_key >= 'msg:' AND o.dedup_key < 'msg;' AND " : "")\
        \(messageId("o.dedup_key")) = \(messageId("r.dedup_key"))
                    AND o.dedup_key <> r.dedup_key
                    AND (COALESCE(o.run, '') <> r.run OR o.dedup_key < r.dedup_key))
        """
    }

    /// The `msg:<id>:` part of a message's key `column` (the key without its 64 hex digits); NULL for a key too
    /// short to be one. Written so for PostgreSQL, where `substr` with a negative length is an error, not an empty
    /// string: SQL does not say in which order a row's conditions are evaluated, and on a large ledger PostgreSQL
    /// joins by hashing, computing this for every record it searches.
    private static func messageId(_ column: String) -> String {
        "CASE WHEN length(\(column)) > 64 THEN substr(\(column), 1, length(\(column)) - 64) END"
    }

    /// Whole quarantined records by reason (first column 0), and parts of used records (1).
    static let quarantineByReason = """
        SELECT CASE WHEN part <> '' THEN 1 ELSE 0 END, reason, COUNT(*) FROM quarantine GROUP BY 1, 2 ORDER BY 1, 2
        """

    static let damagedFiles = """
        SELECT path, damage_offset, damage_reason FROM files WHERE damage_offset IS NOT NULL ORDER BY path
        """

    /// Event-time range of the ledger: the earliest instant any fact is about, the latest statement, among the
    /// facts inside the window reports read (`PlausibleTimes.representable`; an ingest stores no other).
    /// The facts' event range. A test purchase's marker is left out: its records are excluded, and one that states
    /// no time at all (a pending test purchase without `received_at`) is dated at the earliest plausible time.
    static let eventRange = """
        SELECT MIN(at), MAX(observed_at) FROM facts WHERE at >= ? AND observed_at <= ? AND kind <> 'test_purchase'
        """

    /// The quarantined records of plain files (no archive member) whose JSON was malformed, each with the version
    /// of its file the manifest holds: the lines a file being written may have been cut at (``QuarantinedTail``).
    static let quarantinedTails = """
        SELECT q.key, q.file, q.position, q.raw, q.dictionary, f.size, f.sha256
        FROM quarantine q JOIN files f ON f.path = q.file
        WHERE q.part = '' AND q.member = '' AND q.reason = 'malformed_json' AND q.dictionary IS NOT NULL
        """

    /// A quarantined record the ledger no longer keeps (``LedgerStore/forgetQuarantined(keys:)``) leaves the reprocess queue with it.
    static let forgetQuarantined = "DELETE FROM quarantine WHERE key = ?"
    static let dequeueQuarantined = "DELETE FROM reprocess_queue WHERE origin = 'quarantine' AND key = ?"

    static let listQuarantine = """
        SELECT reason, detail, file, member, position, raw, raw_size, dictionary, part FROM quarantine
        WHERE (CAST(? AS TEXT) IS NULL OR reason = ?)
        ORDER BY file, member, position, part, key
        """

    // MARK: report scan

    /// Every subject that continues another (Google `linkedPurchaseToken`) and its predecessor: the smallest
    /// `ref` when several are stated, so the chain is deterministic.
    static let linkPredecessors = """
        SELECT platform, subject, MIN(ref) FROM facts WHERE kind = 'link' AND ref IS NOT NULL
        GROUP BY platform, subject ORDER BY platform, subject
        """

    /// Subject → first subject of its chain (the first subject included, as its own root), with both buckets,
    /// for the duration of one scan (a TEMP table is per connection, and an unqualified name finds it first in
    /// both engines).
    static let createChainRoots = """
        CREATE TEMP TABLE IF NOT EXISTS chain_roots (
            platform TEXT NOT NULL, subject TEXT NOT NULL, bucket BIGINT NOT NULL, root TEXT NOT NULL,
            root_bucket BIGINT NOT NULL, PRIMARY KEY (platform, subject)
        )
        """

    static let clearChainRoots = "DELETE FROM chain_roots"

    static let insertChainRoot = """
        INSERT INTO chain_roots (platform, subject, bucket, root, root_bucket) VALUES (?, ?, ?, ?, ?)
        """

    /// The facts of the subjects in a bucket range that belong to no chain, a subject after another in
    /// primary-key order (so an embedded ledger reads them without sorting); the subject is the subscription.
    static let unchainedFacts = """
        SELECT f.platform, f.subject, f.subject, f.kind, f.at, f.observed_at, f.ref, f.detail, f.product_id,
            f.end_at, f.amount_micros, f.currency, f.flags
        FROM facts f
        WHERE f.bucket BETWEEN ? AND ?
            AND NOT EXISTS (SELECT 1 FROM chain_roots r WHERE r.platform = f.platform AND r.subject = f.subject)
        ORDER BY f.bucket, f.platform, f.subject
        """

    /// The facts of the chains whose first subject is in a bucket range, a chain after another; the chain's
    /// first subject is the subscription.
    static let chainedFacts = """
        SELECT f.platform, r.root, f.subject, f.kind, f.at, f.observed_at, f.ref, f.detail, f.product_id,
            f.end_at, f.amount_micros, f.currency, f.flags
        FROM chain_roots r
        JOIN facts f ON f.bucket = r.bucket AND f.platform = r.platform AND f.subject = r.subject
        WHERE r.root_bucket BETWEEN ? AND ?
        ORDER BY r.platform, r.root
        """

    // MARK: provenance

    static let recordByKey = """
        SELECT dedup_key, source, outcome, reason, file, member, position, received_at, payload, dictionary,
            rules_version
        FROM records WHERE dedup_key = ?
        """

    /// The records whose smallest provenance is this place (a scan: provenance is for people, not for ingest).
    static let recordsAt = """
        SELECT dedup_key, source, outcome, reason, file, member, position, received_at, payload, dictionary,
            rules_version
        FROM records WHERE file = ? AND member = ? AND position = ? ORDER BY dedup_key
        """

    /// The facts this record stated first (a scan of the facts).
    static let factsOfRecord = """
        SELECT platform, subject, kind, at, observed_at, ref, detail, product_id, end_at, amount_micros, currency,
            flags, record
        FROM facts WHERE record = ? ORDER BY platform, subject, at, kind, observed_at, ref, fact_key
        """

    /// The facts of one subject (in the bucket it has on either platform), in the order history builders read
    /// them.
    static let factsOfSubject = """
        SELECT platform, subject, kind, at, observed_at, ref, detail, product_id, end_at, amount_micros, currency,
            flags, record
        FROM facts WHERE bucket IN (?, ?) AND subject = ? ORDER BY platform, subject, at, kind, observed_at, ref, fact_key
        """

    // MARK: checks

    /// The tables' `CHECK` constraints as queries that count the rows breaking them: SQLite's checks skip `CHECK`
    /// constraints on a read-only connection (`report`, `status`), and a flipped byte in `records.outcome` changes
    /// the counts (`used` 3181 -> 3180) while every page stays well formed. Part of the quick check.
    static let constraintChecks: [(rule: String, sql: String)] = [
        ("a file's state is reading or done", "SELECT COUNT(*) FROM files WHERE state NOT IN ('reading', 'done')"),
        ("a record's outcome is used or excluded", "SELECT COUNT(*) FROM records WHERE outcome NOT IN ('used', 'excluded')"),
    ]

    /// Invariants of the ledger's own (`status --verify`), besides ``constraintChecks``: each query counts the rows
    /// that break one.
    static let invariants: [(rule: String, sql: String)] = [
        ("a file read to its end has counts that add up (read = used + duplicate + excluded + quarantined)",
         "SELECT COUNT(*) FROM files WHERE state = 'done' AND read <> used + duplicate + excluded + quarantined"),
        ("no count is negative and every file has a SHA-256",
         """
         SELECT COUNT(*) FROM files WHERE size < 0 OR read < 0 OR used < 0 OR duplicate < 0 OR excluded < 0
             OR quarantined < 0 OR length(sha256) <> 64
         """),
        ("a used record has no exclusion reason, an excluded one has one",
         "SELECT COUNT(*) FROM records WHERE (outcome = 'used') <> (reason IS NULL)"),
        ("every record comes from a file in the manifest",
         "SELECT COUNT(*) FROM records WHERE file NOT IN (SELECT path FROM files)"),
        ("every quarantined record comes from a file in the manifest",
         "SELECT COUNT(*) FROM quarantine WHERE file NOT IN (SELECT path FROM files) OR length(key) <> 64"),
        ("a platform with facts has used records of that platform",
         """
         SELECT COUNT(*) FROM (SELECT DISTINCT platform FROM facts) f
         WHERE NOT EXISTS (SELECT 1 FROM records r WHERE r.outcome = 'used' AND r.source LIKE f.platform || '.%')
         """),
    ]

    /// Every fact, for checking that its key is the digest of its content.
    static let allFacts = """
        SELECT fact_key, platform, subject, kind, at, observed_at, ref, detail, product_id, end_at, amount_micros,
            currency, flags
        FROM facts
        """

    static let recordLabels = "SELECT DISTINCT source, outcome, COALESCE(reason, '') FROM records"

    static let quarantineReasons = "SELECT DISTINCT reason FROM quarantine"

    // MARK: digest

    /// Records with their canonical provenance: two ingest orders must agree on it too.
    static let digestRecords = """
        SELECT dedup_key, source, outcome, reason, file, member, position, received_at, rules_version, subject, flags
        FROM records ORDER BY dedup_key
        """

    /// In primary-key order: no sort, and total even if two subjects shared a key.
    static let digestFacts = """
        SELECT fact_key, observed_at, record FROM facts ORDER BY bucket, platform, subject, fact_key
        """

    static let digestQuarantine = """
        SELECT key, reason, detail, file, member, position, part FROM quarantine ORDER BY key
        """
}

import Foundation

/// The SQL dialects the ledger's schema is written for. Migrations are written once, in SQLite's words, and
/// ``render(_:)`` makes the few changes PostgreSQL needs; every other statement is portable as written.
enum SQLDialect: Sendable, Hashable {
    case sqlite
    case postgres

    /// The statement for this dialect: PostgreSQL stores `BLOB` as `BYTEA`, has no `WITHOUT ROWID` (every
    /// table is a heap with a primary-key index), and compares `TEXT` in byte order only with `COLLATE "C"`,
    /// which is what SQLite's default BINARY collation does and what makes both engines sort rows alike.
    func render(_ statement: String) -> String {
        switch self {
        case .sqlite:
            return statement
        case .postgres:
            return statement
                .replacingWord("BLOB", with: "BYTEA")
                .replacingWord("TEXT", with: "TEXT COLLATE \"C\"")
                .replacingOccurrences(of: ") WITHOUT ROWID", with: ")")
        }
    }
}

/// One step of the ledger's schema: applied once, in list order, and recorded by name in `migrations`, the way
/// GRDB's `DatabaseMigrator` does it. A step is never edited once released; a change is a new step.
struct LedgerMigration: Sendable {
    var name: String
    /// The step adds or drops only what no reader uses (indexes, a writer's work tables): readers work without
    /// it and the facts stay as they are, so a ledger waiting for it is neither stale nor refused to read-only
    /// commands; the next writer applies it.
    var onlyForWriters = false
    /// The engines whose ledgers run the statements; the others record the step as applied and change nothing
    /// (an index one engine's queries never use).
    var engines: Set<SQLDialect> = [.sqlite, .postgres]
    /// The statements of the step (in SQLite's words; see ``SQLDialect/render(_:)``). `ledgerId` is the new
    /// ledger's identity, for the step that stores it.
    var statements: @Sendable (_ ledgerId: String) -> [String]
}

/// Every schema step, oldest first. A ledger written by the release before migrations existed (`PRAGMA
/// user_version` 3, four tables) has applied exactly the first step; ``LedgerMigrator`` records it as such.
enum LedgerMigrations {
    static let all: [LedgerMigration] = [v3Tables, ledgerMeta, recordsV2, reprocessQueue, factsV2, fileLeases,
                                          skippedFiles, partialIndexes, sqliteQueueInStoredOrder, recordsWithoutPayload,
                                          sqliteQueueOfRowids]

    /// `pending` without the steps readers work without (``LedgerMigration/onlyForWriters``).
    static func needingAWriter(_ pending: [String]) -> [String] {
        let writersOnly = Set(all.filter(\.onlyForWriters).map(\.name))
        return pending.filter { !writersOnly.contains($0) }
    }

    /// The name of the first step, which a schema-3 ledger has applied without a `migrations` table.
    static var baseline: String { v3Tables.name }

    /// The four tables of the schema-3 release, as that release created them.
    static let v3Tables = LedgerMigration(name: "001-v3-tables") { _ in [
        // files: the manifest of input files. A file whose path, size and SHA-256 match a `done` row is skipped;
        // `reading` means a run started on it and did not finish (killed): the next run reads it again and the
        // records it already stored deduplicate. The counts are those of the latest read of the file (while
        // `reading`: the largest prefix read so far), so that `status` can add them up.
        """
        CREATE TABLE files (
            path            TEXT    NOT NULL PRIMARY KEY,
            size            BIGINT  NOT NULL,
            sha256          TEXT    NOT NULL,
            state           TEXT    NOT NULL CHECK (state IN ('reading', 'done')),
            read            BIGINT  NOT NULL DEFAULT 0,
            used            BIGINT  NOT NULL DEFAULT 0,
            duplicate       BIGINT  NOT NULL DEFAULT 0,
            excluded        BIGINT  NOT NULL DEFAULT 0,
            quarantined     BIGINT  NOT NULL DEFAULT 0,
            damage_offset   BIGINT,
            damage_reason   TEXT,
            ingested_at     BIGINT  NOT NULL
        )
        """,
        // records: one row per distinct input record (its dedup key), used or excluded. The provenance is the
        // smallest (file, member, position) the record was seen at, so that any ingest order gives the same rows.
        """
        CREATE TABLE records (
            dedup_key       TEXT    NOT NULL PRIMARY KEY,
            source          TEXT    NOT NULL,
            outcome         TEXT    NOT NULL CHECK (outcome IN ('used', 'excluded')),
            reason          TEXT,
            file            TEXT    NOT NULL,
            member          TEXT    NOT NULL,
            position        BIGINT  NOT NULL,
            received_at     BIGINT
        )
        """,
        // facts: the set of facts the used records state (docs/DESIGN.md, "The ledger holds a set of facts").
        // `fact_key` is the first 16 bytes of the SHA-256 of every column but `observed_at` (``FactKey``); a fact
        // stated twice is one row with the earliest `observed_at`. The primary key leads with (platform, subject)
        // and the table has no rowid, so a subscription's facts sit together in one B-tree: an insert updates
        // that one tree, and the report reads facts in subject order. `end_at` is Fact.end (`end` is an SQL
        // keyword).
        """
        CREATE TABLE facts (
            platform        TEXT    NOT NULL,
            subject         TEXT    NOT NULL,
            fact_key        BLOB    NOT NULL,
            kind            TEXT    NOT NULL,
            at              BIGINT  NOT NULL,
            observed_at     BIGINT  NOT NULL,
            ref             TEXT,
            detail          TEXT,
            product_id      TEXT,
            end_at          BIGINT,
            amount_micros   BIGINT,
            currency        TEXT,
            flags           BIGINT  NOT NULL,
            PRIMARY KEY (platform, subject, fact_key)
        ) WITHOUT ROWID
        """,
        // quarantine: records that could not be used, with the reason and their raw bytes. `key` digests (file,
        // member, position, raw bytes), so reading a file again does not add its bad records twice, while two
        // identical bad lines stay two bad records.
        """
        CREATE TABLE quarantine (
            key             TEXT    NOT NULL PRIMARY KEY,
            reason          TEXT    NOT NULL,
            detail          TEXT    NOT NULL,
            file            TEXT    NOT NULL,
            member          TEXT    NOT NULL,
            position        BIGINT  NOT NULL,
            raw             BLOB    NOT NULL,
            raw_size        BIGINT  NOT NULL
        )
        """,
    ] }

    /// What makes a database a subledger ledger, and which one: `format` (always `subledger-ledger`), `ledger_id`
    /// (random, so that report partials of two ledgers are never merged), `rules_version` (the rules every
    /// record's facts were made by; absent while the ledger is empty or being reprocessed) and `reprocess` (the
    /// kind of a reprocess under way: `full` or `quarantined`).
    static let ledgerMeta = LedgerMigration(name: "002-ledger-meta") { ledgerId in [
        """
        CREATE TABLE ledger_meta (
            key             TEXT    NOT NULL PRIMARY KEY,
            value           TEXT    NOT NULL
        )
        """,
        "INSERT INTO ledger_meta (key, value) VALUES ('format', 'subledger-ledger')",
        "INSERT INTO ledger_meta (key, value) VALUES ('ledger_id', '\(ledgerId)')",
    ] }

    /// Records v2. Payloads kept (inputs.md, "Rebuildable"): every distinct record's bytes, compressed with the
    /// ledger's zstd dictionary, and the rules version that translated it; a record from before this step has no
    /// payload (NULL), and `reprocess` reads it again from its archive. A quarantine row's `raw` is the whole
    /// record, compressed, when `dictionary` is set (0: compressed without one); NULL marks a row from before this
    /// step, whose `raw` is the first 4096 bytes as read. And what the records are about:
    /// - `platform` and `subject`: the one subject the record's facts are about (a Google purchase token), NULL
    ///   when none or several; a record whose subject has an excluded `test` record counts as excluded (`test`)
    ///   whatever its own outcome, since test status belongs to the token;
    /// - `flags`: ``StoredRecord/Flags``, OR-ed over every copy of the record (1: `received_at` in epoch seconds);
    /// - `bucket`: ``LedgerBucket`` of its subject; `run`: the run that stored it, which is how a run counts its
    ///   own records;
    /// - `quarantine.part`: for a part of a used record, its path in the payload (`''` for whole records).
    static let recordsV2 = LedgerMigration(name: "003-records-v2") { _ in [
        """
        CREATE TABLE payload_dictionaries (
            id              BIGINT  NOT NULL PRIMARY KEY,
            bytes           BLOB    NOT NULL,
            created_at      BIGINT  NOT NULL
        )
        """,
        "ALTER TABLE records ADD COLUMN payload BLOB",
        "ALTER TABLE records ADD COLUMN dictionary BIGINT",
        "ALTER TABLE records ADD COLUMN rules_version BIGINT NOT NULL DEFAULT 0",
        "ALTER TABLE records ADD COLUMN bucket BIGINT NOT NULL DEFAULT 0",
        "ALTER TABLE records ADD COLUMN platform TEXT",
        "ALTER TABLE records ADD COLUMN subject TEXT",
        "ALTER TABLE records ADD COLUMN flags BIGINT NOT NULL DEFAULT 0",
        "ALTER TABLE records ADD COLUMN run TEXT",
        "CREATE INDEX records_by_bucket ON records (bucket)",
        "CREATE INDEX records_by_run ON records (run)",
        "ALTER TABLE quarantine ADD COLUMN dictionary BIGINT",
        "ALTER TABLE quarantine ADD COLUMN rules_version BIGINT NOT NULL DEFAULT 0",
        "ALTER TABLE quarantine ADD COLUMN part TEXT NOT NULL DEFAULT ''",
    ] }

    /// The work list of a reprocess: the records and quarantined records to translate again, put here in one
    /// transaction and deleted from here in the same transaction as their new rows are written, so that a killed
    /// reprocess resumes where it stopped (read as ``ReprocessQueueReader`` says). A quarantined
    /// record moves here with its bytes; a record is queued by key, and `payload` stays NULL while its old row in
    /// `records` holds it (``LedgerSchema/queueRecords``).
    static let reprocessQueue = LedgerMigration(name: "004-reprocess-queue") { _ in [
        """
        CREATE TABLE reprocess_queue (
            origin          TEXT    NOT NULL CHECK (origin IN ('record', 'quarantine')),
            key             TEXT    NOT NULL,
            file            TEXT    NOT NULL,
            member          TEXT    NOT NULL,
            position        BIGINT  NOT NULL,
            payload         BLOB,
            dictionary      BIGINT,
            PRIMARY KEY (origin, key)
        )
        """,
        "CREATE INDEX reprocess_queue_by_provenance ON reprocess_queue (file, member, position, origin, key)",
    ] }

    /// File claims of a ledger shared by several ingests (PostgreSQL): the process reading a file and until when
    /// its claim holds unless renewed. An embedded ledger has one writer and leaves them NULL.
    static let fileLeases = LedgerMigration(name: "006-file-leases") { _ in [
        "ALTER TABLE files ADD COLUMN lease_owner TEXT",
        "ALTER TABLE files ADD COLUMN lease_until BIGINT",
    ] }

    /// Facts v2: the fact names the record that stated it first (`record`: earliest `observed_at`, then
    /// smallest dedup key, so that any order of ingest gives the same one), and every fact carries its `bucket`
    /// (``LedgerBucket``, a stable hash of platform and subject into 0..<1024) leading the facts' primary key, so that a report slice reads a range of buckets and a distributed database places rows by it. The
    /// facts of an older ledger are dropped: its records have no payload either, and a reprocess rebuilds both.
    /// Links get an index of their own: every report reads them all to join Google chains.
    static let factsV2 = LedgerMigration(name: "005-facts-v2") { _ in [
        "DROP TABLE facts",
        """
        CREATE TABLE facts (
            bucket          BIGINT  NOT NULL,
            platform        TEXT    NOT NULL,
            subject         TEXT    NOT NULL,
            fact_key        BLOB    NOT NULL,
            kind            TEXT    NOT NULL,
            at              BIGINT  NOT NULL,
            observed_at     BIGINT  NOT NULL,
            ref             TEXT,
            detail          TEXT,
            product_id      TEXT,
            end_at          BIGINT,
            amount_micros   BIGINT,
            currency        TEXT,
            flags           BIGINT  NOT NULL,
            record          TEXT,
            PRIMARY KEY (bucket, platform, subject, fact_key)
        ) WITHOUT ROWID
        """,
        "CREATE INDEX facts_links ON facts (platform, subject, ref) WHERE kind = 'link'",
    ] }

    /// Files found among the inputs that are not inputs (not JSON, gzip, tar or zip; FIFOs, sockets, broken
    /// links), with the latest reason, so that `status` lists them (`cli.md`). A path read as an input later
    /// leaves this table.
    static let skippedFiles = LedgerMigration(name: "007-skipped-files") { _ in [
        """
        CREATE TABLE skipped_files (
            path            TEXT    NOT NULL PRIMARY KEY,
            reason          TEXT    NOT NULL,
            skipped_at      BIGINT  NOT NULL
        )
        """,
    ] }

    /// What an ingest counts of its own records, without reading the whole ledger: the subjects of test
    /// purchases (an excluded `test` record), which every count of records by outcome asks for, the records with
    /// `received_at` in seconds, and the quarantined parts of used records. Without them each ingest scanned the
    /// whole `records` table twice, payloads included, however little it read. The sets are small, and so are
    /// the partial indexes.
    static let partialIndexes = LedgerMigration(name: "008-partial-indexes", onlyForWriters: true) { _ in [
        "CREATE INDEX records_test_subjects ON records (platform, subject) WHERE outcome = 'excluded' AND reason = 'test'",
        "CREATE INDEX records_in_seconds ON records (flags) WHERE flags & 1 <> 0",
        "CREATE INDEX quarantine_parts ON quarantine (part) WHERE part <> ''",
    ] }

    /// SQLite reads a reprocess's queue in the order its rows were put there (rowid, the records' stored order;
    /// `SQLiteQueueReader`), never by provenance, so there the provenance index only cost time: an entry of long
    /// keys made for every queued record when a reprocess starts and deleted again as the record is written, each
    /// at a random place in the index. PostgreSQL reads its queue by provenance and keeps the index.
    static let sqliteQueueInStoredOrder = LedgerMigration(name: "009-sqlite-queue-in-stored-order", onlyForWriters: true,
                                                          engines: [.sqlite]) { _ in [
        "DROP INDEX reprocess_queue_by_provenance",
    ] }

    /// Records without a payload (only a ledger written before payloads were kept has them; such a ledger must
    /// be reprocessed) are looked for whenever a command opens the ledger, `report` included; without an index
    /// that was a scan of every record, payloads and all, before anything else could start (0.06 to 0.15 s on
    /// the 20,000-subscriber bench ledger). The partial index is empty in every ledger written since.
    static let recordsWithoutPayload = LedgerMigration(name: "010-records-without-payload", onlyForWriters: true) { _ in [
        "CREATE INDEX records_without_payload ON records (file) WHERE payload IS NULL",
    ] }

    /// SQLite queues a reprocess's records by their rowids in `records`, not by key in `reprocess_queue`
    /// (`SQLiteLedger+Reprocess.swift`): a full reprocess of the 20,000-subscriber bench ledger spent 3 s before
    /// its first record copying 267,000 keys and provenances into the queue, each key inserted at a random place
    /// of the queue's primary key, and the writer then deleted each again. A rowid list is appended in order, a
    /// few bytes a record. `reprocess_stash` keeps the old row of a queued record whose key another copy took
    /// first, under the same rowid (the new copy is written over the old row). Records a reprocess of the
    /// release before this step left queued move to the list; PostgreSQL keeps its queue.
    static let sqliteQueueOfRowids = LedgerMigration(name: "011-sqlite-queue-of-rowids", onlyForWriters: true,
                                                     engines: [.sqlite]) { _ in [
        "CREATE TABLE reprocess_records (record INTEGER PRIMARY KEY)",
        """
        CREATE TABLE reprocess_stash (
            record          INTEGER PRIMARY KEY,
            key             TEXT    NOT NULL,
            file            TEXT    NOT NULL,
            member          TEXT    NOT NULL,
            position        BIGINT  NOT NULL,
            payload         BLOB    NOT NULL,
            dictionary      BIGINT
        )
        """,
        """
        INSERT INTO reprocess_records (record)
        SELECT r.rowid FROM reprocess_queue q JOIN records r ON r.dedup_key = q.key
        WHERE q.origin = 'record' AND q.payload IS NULL
        ORDER BY r.rowid
        """,
        "DELETE FROM reprocess_queue WHERE origin = 'record' AND payload IS NULL",
    ] }
}

private extension String {
    /// Replaces `word` where it stands alone (not inside a longer identifier such as `raw_size`).
    func replacingWord(_ word: String, with replacement: String) -> String {
        var result = ""
        var rest = Substring(self)
        func isIdentifier(_ character: Character?) -> Bool {
            guard let character else { return false }
            return character.isLetter || character.isNumber || character == "_"
        }
        while let range = rest.range(of: word) {
            let before = range.lowerBound == rest.startIndex ? result.last : rest[rest.index(before: range.lowerBound)]
            let after = range.upperBound == rest.endIndex ? nil : rest[range.upperBound]
            result += rest[..<range.lowerBound]
            result += isIdentifier(before) || isIdentifier(after) ? word : replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}

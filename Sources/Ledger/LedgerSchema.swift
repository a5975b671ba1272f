/// The ledger's tables and every SQL statement the ledger runs, one statement per constant.
///
/// Portability: the SQL sticks to what PostgreSQL also accepts (`INSERT ... ON CONFLICT`, row values,
/// `WITH`, `CASE`; `TEXT`, `BIGINT`, `BLOB`/`BYTEA` is the only type to rename), so that moving the ledger to
/// PostgreSQL is a change of driver, not of design. Text columns compare byte-wise (SQLite's BINARY collation;
/// PostgreSQL needs `COLLATE "C"`), which is what makes the report's order deterministic.
/// A missing archive member is stored as `''`, not NULL, so that provenance compares as a plain row value.
enum LedgerSchema {
    /// Stored in SQLite's `user_version` when the tables are created; a ledger with another version is refused
    /// rather than misread. 2: binary `fact_key`, facts clustered by subject. 3: quarantine keys include the
    /// record's position. 4: `skipped_files`.
    static let version: Int64 = 4

    /// The ledger's tables: a database holding all of them is a ledger, one holding none is new.
    static let tables = ["files", "records", "facts", "quarantine", "skipped_files"]

    static let create = [
        // files: the manifest of input files. A file whose path, size and SHA-256 match a `done` row is skipped;
        // `reading` means a run started on it and did not finish (killed): the next run reads it again and the
        // records it already stored deduplicate. The counts are those of the latest read of the file (while
        // `reading`: the largest prefix read so far), so that `status` can add them up.
        """
        CREATE TABLE IF NOT EXISTS files (
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
        CREATE TABLE IF NOT EXISTS records (
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
        // stated twice is one row with the earliest `observed_at`, so the set does not depend on the order records
        // arrive in. `end_at` is Fact.end (`end` is an SQL keyword).
        //
        // The primary key leads with (platform, subject) and the table has no rowid, so a subscription's facts
        // sit together in one B-tree: an insert updates that one tree (a rowid table with a unique `fact_key`
        // and a by-subject index updated three, at random places, and outgrew the page cache as the ledger
        // grew), and the report reads facts in subject order. PostgreSQL: drop `WITHOUT ROWID`, `BLOB` is `BYTEA`.
        """
        CREATE TABLE IF NOT EXISTS facts (
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
        // quarantine: records that could not be used, with the reason and the first 4096 raw bytes (enough to
        // see what it was; `raw_size` tells how much there was). `key` digests (file, member, position, raw
        // bytes), so reading a file again (grown by appends, or after a killed run) does not add its bad records
        // twice, while two identical bad lines stay two bad records.
        """
        CREATE TABLE IF NOT EXISTS quarantine (
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
        // skipped_files: files found among the inputs that are not inputs (not JSON, gzip, tar or zip; FIFOs,
        // sockets, broken links), with the latest reason, so that `status` lists them (`cli.md`). A path read
        // as an input later leaves this table.
        """
        CREATE TABLE IF NOT EXISTS skipped_files (
            path            TEXT    NOT NULL PRIMARY KEY,
            reason          TEXT    NOT NULL,
            skipped_at      BIGINT  NOT NULL
        )
        """,
    ]

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

    static let finishFile = """
        UPDATE files SET state = 'done', read = ?, used = ?, duplicate = ?, excluded = ?, quarantined = ?,
            damage_offset = ?, damage_reason = ?, ingested_at = ?
        WHERE path = ?
        """

    static let listFiles = """
        SELECT path, size, sha256, state, read, used, duplicate, excluded, quarantined, damage_offset,
            damage_reason, ingested_at
        FROM files ORDER BY path
        """

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
        INSERT INTO records (dedup_key, source, outcome, reason, file, member, position, received_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (dedup_key) DO NOTHING
        """

    /// A duplicate seen at a smaller provenance moves the record's provenance there (canonical provenance).
    static let moveRecordProvenance = """
        UPDATE records SET file = ?, member = ?, position = ?, received_at = ?
        WHERE dedup_key = ? AND (file, member, position) > (?, ?, ?)
        """

    /// The set semantics: an existing fact keeps the earliest `observed_at`.
    static let insertFact = """
        INSERT INTO facts (fact_key, platform, subject, kind, at, observed_at, ref, detail, product_id, end_at,
            amount_micros, currency, flags)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (platform, subject, fact_key) DO UPDATE SET observed_at = excluded.observed_at
        WHERE excluded.observed_at < facts.observed_at
        """

    static let insertQuarantine = """
        INSERT INTO quarantine (key, reason, detail, file, member, position, raw, raw_size)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (key) DO NOTHING
        """

    // MARK: statistics

    static let fileTotals = """
        SELECT COUNT(*), COALESCE(SUM(read), 0) FROM files
        """

    static let recordsByOutcome = """
        SELECT outcome, COALESCE(reason, ''), COUNT(*) FROM records GROUP BY outcome, reason ORDER BY outcome, reason
        """

    static let recordsBySource = """
        SELECT source, outcome, COUNT(*) FROM records GROUP BY source, outcome ORDER BY source, outcome
        """

    static let quarantineByReason = "SELECT reason, COUNT(*) FROM quarantine GROUP BY reason ORDER BY reason"

    static let damagedFiles = """
        SELECT path, damage_offset, damage_reason FROM files WHERE damage_offset IS NOT NULL ORDER BY path
        """

    /// Event-time range of the ledger: the earliest instant any fact is about, the latest statement.
    static let eventRange = "SELECT MIN(at), MAX(observed_at) FROM facts"

    static let listQuarantine = """
        SELECT reason, detail, file, member, position, raw, raw_size FROM quarantine
        WHERE (? IS NULL OR reason = ?)
        ORDER BY file, member, position, key
        """

    // MARK: report scan

    /// The subjects that continue another subject (Google `linkedPurchaseToken`), in order.
    static let linkedSubjects = """
        SELECT DISTINCT platform, subject FROM facts WHERE kind = 'link' AND ref IS NOT NULL ORDER BY platform, subject
        """

    /// The predecessor of one subject; the smallest when several are stated, so the chain is deterministic.
    static let predecessor = """
        SELECT MIN(ref) FROM facts WHERE platform = ? AND subject = ? AND kind = 'link' AND ref IS NOT NULL
        """

    /// Subject → first subject of its chain, for the duration of one scan (a TEMP table is per connection).
    static let createChainRoots = """
        CREATE TEMP TABLE IF NOT EXISTS chain_roots (
            platform TEXT NOT NULL, subject TEXT NOT NULL, root TEXT NOT NULL, PRIMARY KEY (platform, subject)
        )
        """

    static let clearChainRoots = "DELETE FROM temp.chain_roots"

    static let insertChainRoot = "INSERT INTO temp.chain_roots (platform, subject, root) VALUES (?, ?, ?)"

    /// Every fact, grouped by subscription (chain root), in the order history builders expect. The tail of the
    /// ORDER BY makes the order total, so the same ledger always yields the same sequence.
    static let factsBySubscription = """
        SELECT f.platform, COALESCE(r.root, f.subject) AS subscription, f.subject, f.kind, f.at, f.observed_at,
            f.ref, f.detail, f.product_id, f.end_at, f.amount_micros, f.currency, f.flags
        FROM facts f
        LEFT JOIN temp.chain_roots r ON r.platform = f.platform AND r.subject = f.subject
        ORDER BY f.platform, subscription, f.at, f.kind, f.observed_at, f.ref, f.fact_key
        """

    // MARK: checks

    /// SQLite's structural check of every page (not of indexes against tables): run at every open for writing or
    /// reporting, so that a damaged file is said before any number is taken from it.
    static let quickCheck = "PRAGMA quick_check(20)"

    /// The full check, indexes against their tables included (`status --verify`).
    static let integrityCheck = "PRAGMA integrity_check(100)"

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
        ("every quarantined record comes from a file in the manifest and keeps at most its own bytes",
         """
         SELECT COUNT(*) FROM quarantine WHERE file NOT IN (SELECT path FROM files) OR raw_size < length(raw)
             OR length(key) <> 64
         """),
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
        SELECT dedup_key, source, outcome, reason, file, member, position FROM records ORDER BY dedup_key
        """

    /// In primary-key order: no sort, and total even if two subjects shared a key.
    static let digestFacts = "SELECT fact_key, observed_at FROM facts ORDER BY platform, subject, fact_key"

    static let digestQuarantine = "SELECT key, reason FROM quarantine ORDER BY key"
}

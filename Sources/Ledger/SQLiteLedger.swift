import Crypto
import Facts
import Foundation
import Ingest
import SystemSQLite

/// The ledger in one SQLite database file (see ``LedgerSchema`` for the tables and why each exists).
///
/// WAL journal with `synchronous = NORMAL`: a committed transaction survives a killed process (only an OS
/// crash may lose the last commits, which a re-run reads again), and `status` / `report` can read while an
/// ingest writes. Statements are prepared once per connection and reused.
///
/// A class because it owns the C connection; not `Sendable`: use one per thread.
public final class SQLiteLedger: LedgerStore {
    /// How the database is opened: `report`, `status` and `quarantine` only read.
    public enum Mode: Sendable {
        /// Creates the database and its tables when missing (ingest).
        case readWrite
        /// Opens an existing database without writing to it (status, report, quarantine); a missing file throws
        /// ``LedgerError/Kind/notFound``.
        case readOnly
    }

    public let path: String
    private let connection: SQLiteConnection
    private var statements: [SQLiteStatement] = []
    private var inTransaction = false

    /// Opens (and with ``Mode/readWrite`` creates) the ledger at `path`. `busyTimeout` bounds how long a
    /// statement waits for another connection's write lock.
    public init(path: String, mode: Mode = .readWrite, busyTimeout: Duration = .seconds(30)) throws(LedgerError) {
        self.path = path
        connection = try SQLiteConnection(path: path, create: mode == .readWrite, readOnly: mode == .readOnly)
        let milliseconds = busyTimeout.components.seconds * 1000 + busyTimeout.components.attoseconds / 1_000_000_000_000_000
        connection.setBusyTimeout(milliseconds: Int32(clamping: milliseconds))
        if mode == .readWrite {
            // 64 MiB of page cache instead of SQLite's 2 MiB: fact keys and dedup keys are hashes, so inserts land
            // on random pages of their indexes. Bounded, so memory stays flat whatever the ledger's size.
            try connection.execute("PRAGMA cache_size = -65536")
            try connection.execute("PRAGMA journal_mode = WAL")
            try connection.execute("PRAGMA synchronous = NORMAL")
            try connection.execute("BEGIN IMMEDIATE")
            do {
                if try tableCount() == 0 {
                    for statement in LedgerSchema.create { try connection.execute(statement) }
                    try connection.execute("PRAGMA user_version = \(LedgerSchema.version)")
                } else {
                    try requireSchema()
                }
                try connection.execute("COMMIT")
            } catch {
                try? connection.execute("ROLLBACK")
                throw error
            }
        } else {
            try requireSchema()
        }
    }

    // MARK: transactions

    public func beginTransaction() throws(LedgerError) {
        // IMMEDIATE takes the write lock up front, so a transaction never fails half-way on a lock upgrade.
        try connection.execute("BEGIN IMMEDIATE")
        inTransaction = true
    }

    public func commitTransaction() throws(LedgerError) {
        try connection.execute("COMMIT")
        inTransaction = false
    }

    public func rollbackTransaction() {
        guard inTransaction else { return }
        try? connection.execute("ROLLBACK")
        inTransaction = false
    }

    // MARK: file manifest

    public func isDone(_ file: FileFingerprint) throws(LedgerError) -> Bool {
        let statement = try prepared(LedgerSchema.fileState)
        try statement.bind(1, file.path)
        guard try statement.step() else { return false }
        return statement.int64(0) == file.size && statement.string(1) == file.sha256 && statement.string(2) == "done"
    }

    public func beginFile(_ file: FileFingerprint) throws(LedgerError) {
        let statement = try prepared(LedgerSchema.beginFile)
        try statement.bind(1, file.path)
        try statement.bind(2, file.size)
        try statement.bind(3, file.sha256)
        try statement.bind(4, Self.now())
        try statement.run()
        let unskip = try prepared(LedgerSchema.unskipFile)
        try unskip.bind(1, file.path)
        try unskip.run()
    }

    public func skipFile(_ skipped: IngestStatistics.Skipped) throws(LedgerError) {
        let statement = try prepared(LedgerSchema.skipFile)
        try statement.bind(1, skipped.file)
        try statement.bind(2, skipped.reason)
        try statement.bind(3, Self.now())
        try statement.run()
    }

    public func saveProgress(path: String, read: Int) throws(LedgerError) {
        let statement = try prepared(LedgerSchema.fileProgress)
        try statement.bind(1, read)
        try statement.bind(2, read)
        try statement.bind(3, path)
        try statement.run()
    }

    public func finishFile(_ file: FileFingerprint, counts: FileCounts, damage: Damage?) throws(LedgerError) {
        let statement = try prepared(LedgerSchema.finishFile)
        try statement.bind(1, counts.read)
        try statement.bind(2, counts.used)
        try statement.bind(3, counts.duplicate)
        try statement.bind(4, counts.excluded)
        try statement.bind(5, counts.quarantined)
        try statement.bind(6, damage?.offset)
        try statement.bind(7, damage?.reason)
        try statement.bind(8, Self.now())
        try statement.bind(9, file.path)
        try statement.run()
    }

    public func files() throws(LedgerError) -> [FileManifestEntry] {
        let statement = try prepared(LedgerSchema.listFiles)
        var entries: [FileManifestEntry] = []
        while try statement.step() {
            let path = statement.string(0)
            guard let state = FileManifestEntry.State(rawValue: statement.string(3)) else {
                throw LedgerError(kind: .corrupt, path: self.path, message: "file \(path) has an unknown state")
            }
            let counts = FileCounts(read: Int(statement.int64(4)), used: Int(statement.int64(5)),
                                    duplicate: Int(statement.int64(6)), excluded: Int(statement.int64(7)),
                                    quarantined: Int(statement.int64(8)))
            let damage = statement.optionalInt64(9).map {
                Damage(file: path, offset: $0, reason: statement.optionalString(10) ?? "")
            }
            entries.append(FileManifestEntry(
                fingerprint: FileFingerprint(path: path, size: statement.int64(1), sha256: statement.string(2)),
                state: state, counts: counts, damage: damage, ingestedAt: statement.int64(11)))
        }
        return entries
    }

    // MARK: records

    public func store(_ record: StoredRecord, keyedFacts facts: [KeyedFact]) throws(LedgerError) -> Bool {
        let provenance = record.provenance
        let insert = try prepared(LedgerSchema.insertRecord)
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
        try insert.run()
        let isNew = insert.changes > 0
        if !isNew {
            let move = try prepared(LedgerSchema.moveRecordProvenance)
            try move.bind(1, provenance.file)
            try move.bind(2, provenance.member ?? "")
            try move.bind(3, provenance.position)
            try move.bind(4, record.receivedAt)
            try move.bind(5, record.dedupKey)
            try move.bind(6, provenance.file)
            try move.bind(7, provenance.member ?? "")
            try move.bind(8, provenance.position)
            try move.run()
        }
        for fact in facts { try self.insert(fact) }
        return isNew
    }

    public func quarantine(_ entry: QuarantineEntry) throws(LedgerError) -> Bool {
        let statement = try prepared(LedgerSchema.insertQuarantine)
        try statement.bind(1, entry.key)
        try statement.bind(2, entry.reason)
        try statement.bind(3, entry.detail)
        try statement.bind(4, entry.provenance.file)
        try statement.bind(5, entry.provenance.member ?? "")
        try statement.bind(6, entry.provenance.position)
        try statement.bind(7, blob: entry.raw[...])
        try statement.bind(8, entry.rawSize)
        try statement.run()
        return statement.changes > 0
    }

    private func insert(_ keyed: KeyedFact) throws(LedgerError) {
        let fact = keyed.fact
        let statement = try prepared(LedgerSchema.insertFact)
        try statement.bind(1, blob: keyed.key.bytes[...])
        try statement.bind(2, fact.platform.rawValue)
        try statement.bind(3, fact.subject)
        try statement.bind(4, fact.kind.rawValue)
        try statement.bind(5, fact.at)
        try statement.bind(6, fact.observedAt)
        try statement.bind(7, fact.ref)
        try statement.bind(8, fact.detail)
        try statement.bind(9, fact.productId)
        try statement.bind(10, fact.end)
        try statement.bind(11, fact.amountMicros)
        try statement.bind(12, fact.currency)
        try statement.bind(13, fact.flags.rawValue)
        try statement.run()
    }

    // MARK: reading

    /// Everything ingested so far.
    ///
    /// - `files`: manifest rows; `read`: Σ of each file's latest read.
    /// - `used` / `excluded`: rows of `records` by outcome; `quarantined`: rows of `quarantine`.
    /// - `duplicate = read - used - excluded - quarantined`. This is exact because every stored row was created
    ///   by exactly one record read, and every other record read found its row already there, i.e. was a
    ///   duplicate. It holds as long as files only grow (archives are appended to or left alone): each row's
    ///   record is then still inside the latest read of some file. A file rewritten with records removed leaves
    ///   rows that no latest read counts, and duplicates are undercounted (never below 0: clamped).
    public func statistics() throws(LedgerError) -> IngestStatistics {
        var statistics = IngestStatistics()
        let totals = try prepared(LedgerSchema.fileTotals)
        if try totals.step() {
            statistics.files = Int(totals.int64(0))
            statistics.read = Int(totals.int64(1))
        }
        totals.reset()
        let outcomes = try prepared(LedgerSchema.recordsByOutcome)
        while try outcomes.step() {
            let count = Int(outcomes.int64(2))
            if outcomes.string(0) == "used" {
                statistics.used += count
            } else {
                statistics.excluded += count
                statistics.excludedByReason[outcomes.string(1), default: 0] += count
            }
        }
        outcomes.reset()
        let quarantine = try prepared(LedgerSchema.quarantineByReason)
        while try quarantine.step() {
            let count = Int(quarantine.int64(1))
            statistics.quarantined += count
            statistics.quarantinedByReason[quarantine.string(0), default: 0] += count
        }
        quarantine.reset()
        statistics.duplicate = max(0, statistics.read - statistics.used - statistics.excluded - statistics.quarantined)
        statistics.read = statistics.used + statistics.duplicate + statistics.excluded + statistics.quarantined
        let damaged = try prepared(LedgerSchema.damagedFiles)
        while try damaged.step() {
            statistics.damagedFiles.append(IngestStatistics.Damaged(
                file: damaged.string(0), offset: damaged.int64(1), reason: damaged.optionalString(2) ?? ""))
        }
        damaged.reset()
        let skipped = try prepared(LedgerSchema.listSkipped)
        while try skipped.step() {
            statistics.skippedFiles.append(IngestStatistics.Skipped(file: skipped.string(0), reason: skipped.string(1)))
        }
        skipped.reset()
        let range = try prepared(LedgerSchema.eventRange)
        if try range.step() {
            statistics.firstEventAt = range.optionalInt64(0)
            statistics.lastEventAt = range.optionalInt64(1)
        }
        range.reset()
        return statistics
    }

    public func countsBySource() throws(LedgerError) -> [SourceCount] {
        let statement = try prepared(LedgerSchema.recordsBySource)
        defer { statement.reset() }
        var counts: [SourceCount] = []
        while try statement.step() {
            let source = statement.string(0)
            if counts.last?.source != source { counts.append(SourceCount(source: source, used: 0, excluded: 0)) }
            let count = Int(statement.int64(2))
            if statement.string(1) == "used" { counts[counts.count - 1].used += count } else { counts[counts.count - 1].excluded += count }
        }
        return counts
    }

    public func forEachQuarantined(reason: String?, _ body: (QuarantineEntry) throws -> Void) throws {
        // A statement of its own: `body` may call back into the ledger.
        let statement = try connection.prepare(LedgerSchema.listQuarantine)
        try statement.bind(1, reason)
        try statement.bind(2, reason)
        while try statement.step() {
            let member = statement.string(3)
            let provenance = Provenance(file: statement.string(2), member: member.isEmpty ? nil : member,
                                        position: statement.int64(4))
            try body(QuarantineEntry(reason: statement.string(0), detail: statement.string(1), provenance: provenance,
                                     raw: statement.blob(5), rawSize: Int(statement.int64(6)), key: ""))
        }
    }

    public func contentDigest() throws(LedgerError) -> String {
        enum Column { case text, integer, blob }
        var hasher = SHA256()
        var encoder = DigestEncoder()
        let tables: [(sql: String, columns: [Column])] = [
            (LedgerSchema.digestRecords, [.text, .text, .text, .text, .text, .text, .integer]),
            (LedgerSchema.digestFacts, [.blob, .integer]),
            (LedgerSchema.digestQuarantine, [.text, .text]),
        ]
        for (table, (sql, columns)) in tables.enumerated() {
            let statement = try connection.prepare(sql)
            encoder.reset()
            encoder.append(Int64(table))
            hasher.update(data: encoder.bytes)
            while try statement.step() {
                encoder.reset()
                for (column, kind) in zip(Int32(0)..., columns) {
                    switch kind {
                    case .text: encoder.append(statement.optionalString(column))
                    case .integer: encoder.append(statement.optionalInt64(column))
                    case .blob: encoder.append(bytes: statement.blob(column))
                    }
                }
                hasher.update(data: encoder.bytes)
            }
        }
        return hasher.finalize().hexString
    }

    // MARK: helpers

    /// The statement for `sql`, prepared on first use and reset for reuse.
    ///
    /// A short list searched in order, not a dictionary: `sql` is one of ``LedgerSchema``'s constants, and two
    /// copies of one constant share their storage, so `==` answers from the pointers without reading the text,
    /// where hashing a few hundred characters of SQL for every row written cost more than the row's binds.
    func prepared(_ sql: String) throws(LedgerError) -> SQLiteStatement {
        if let statement = statements.first(where: { $0.sql == sql }) {
            statement.reset()
            return statement
        }
        let statement = try connection.prepare(sql)
        statements.append(statement)
        return statement
    }

    var sqlite: SQLiteConnection { connection }

    /// How many of the ledger's tables (``LedgerSchema/tables``) the database has (0 for a new file).
    private func tableCount() throws(LedgerError) -> Int {
        let names = LedgerSchema.tables.map { "'\($0)'" }.joined(separator: ", ")
        let statement = try connection.prepare("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN (\(names))")
        return try statement.step() ? Int(statement.int64(0)) : 0
    }

    /// Fails unless the database is a ledger with this version's schema (``LedgerSchema/version``).
    private func requireSchema() throws(LedgerError) {
        let tables = try tableCount()
        guard tables > 0 else {
            throw LedgerError(kind: .corrupt, path: path, message: "not a subledger database (its tables are missing)")
        }
        let statement = try connection.prepare("PRAGMA user_version")
        let version = try statement.step() ? statement.int64(0) : 0
        guard version == LedgerSchema.version else {
            let writer = version < LedgerSchema.version ? "an earlier" : "a later"
            throw LedgerError(kind: .corrupt, path: path, message: """
                written by \(writer) version of subledger (ledger schema \(version), this one reads \
                \(LedgerSchema.version)): ingest the archives again into a new --db
                """)
        }
        guard tables == LedgerSchema.tables.count else {
            throw LedgerError(kind: .damaged, path: path, message: "some of the ledger's tables are missing" + Self.recovery(path))
        }
    }

    // MARK: checks

    /// SQLite's `quick_check` (every page of the file is readable and well formed; indexes are not compared with
    /// their tables: that is ``verify()``) and the tables' `CHECK` constraints (``LedgerSchema/constraintChecks``).
    /// Ingest and report run it when they open the ledger, so that a damaged file stops them with a message
    /// before a number is taken from it or written into it.
    /// - Throws: ``LedgerError/Kind/damaged`` with what SQLite found and how to recover.
    public func quickCheck() throws(LedgerError) {
        var problems = try pragmaCheck(LedgerSchema.quickCheck).map { "SQLite quick_check: \($0)" }
        if problems.isEmpty { problems = try broken(LedgerSchema.constraintChecks) }
        guard problems.isEmpty else {
            let found = problems.prefix(3).joined(separator: "; ")
            throw LedgerError(kind: .damaged, path: path, message: "the ledger is damaged (\(found))" + Self.recovery(path))
        }
    }

    /// The rules of `checks` that some rows break, as sentences.
    private func broken(_ checks: [(rule: String, sql: String)]) throws(LedgerError) -> [String] {
        var problems: [String] = []
        for (rule, sql) in checks {
            let statement = try connection.prepare(sql)
            let count = try statement.step() ? statement.int64(0) : 0
            if count > 0 { problems.append("\(count) row(s) break the rule: \(rule)") }
        }
        return problems
    }

    /// Everything `status --verify` checks: SQLite's `integrity_check` (pages, indexes against their tables,
    /// `NOT NULL` constraints), the `CHECK` constraints, then the ledger's own invariants (``LedgerSchema/invariants``: each
    /// file's counts add up, records and quarantined records come from files in the manifest, ...), every label
    /// (source, outcome, reason) is one this version writes, and every fact's key is the digest of its content,
    /// so that a changed byte in a fact shows.
    /// - Returns: the problems found, each a sentence; empty for a sound ledger.
    public func verify() throws(LedgerError) -> [String] {
        let structural = try pragmaCheck(LedgerSchema.integrityCheck)
        guard structural.isEmpty else { return structural.map { "SQLite integrity_check: \($0)" } }
        var problems = try broken(LedgerSchema.constraintChecks + LedgerSchema.invariants)
        let labels = try connection.prepare(LedgerSchema.recordLabels)
        while try labels.step() {
            if SourceKind(rawValue: labels.string(0)) == nil {
                problems.append("records have the unknown source \"\(labels.string(0))\"")
            }
            if labels.string(1) == "excluded", ExclusionReason(rawValue: labels.string(2)) == nil {
                problems.append("records are excluded for the unknown reason \"\(labels.string(2))\"")
            }
        }
        let reasons = try connection.prepare(LedgerSchema.quarantineReasons)
        while try reasons.step() {
            if QuarantineReason(rawValue: reasons.string(0)) == nil {
                problems.append("records are quarantined for the unknown reason \"\(reasons.string(0))\"")
            }
        }
        let facts = try connection.prepare(LedgerSchema.allFacts)
        var mismatched = 0
        while try facts.step() {
            guard let platform = Platform(rawValue: facts.string(1)) else {
                mismatched += 1
                continue
            }
            let fact = Fact(platform: platform, subject: facts.string(2), kind: Fact.Kind(rawValue: facts.string(3)),
                            at: facts.int64(4), observedAt: facts.int64(5), ref: facts.optionalString(6),
                            detail: facts.optionalString(7), productId: facts.optionalString(8),
                            end: facts.optionalInt64(9), amountMicros: facts.optionalInt64(10),
                            currency: facts.optionalString(11), flags: Fact.Flags(rawValue: Int(facts.int64(12))))
            if FactKey(fact).bytes != facts.blob(0) { mismatched += 1 }
        }
        if mismatched > 0 {
            problems.append("\(mismatched) fact(s) do not match their key: their content changed after they were written")
        }
        return problems
    }

    /// The rows of `PRAGMA quick_check` / `integrity_check`, without the single `ok` of a sound file.
    private func pragmaCheck(_ sql: String) throws(LedgerError) -> [String] {
        let statement = try connection.prepare(sql)
        var rows: [String] = []
        while try statement.step() { rows.append(statement.optionalString(0) ?? "") }
        return rows == ["ok"] ? [] : rows
    }

    /// What to do about a damaged ledger at `path`: appended to every message that says it is damaged.
    static func recovery(_ path: String) -> String {
        """
        . Nothing was changed. Restore the ledger from a backup, or rebuild it from the archives: move \(path) \
        aside and run `subledger ingest` on all of them with a new --db
        """
    }

    /// Wall-clock time for `ingested_at` (ms, UTC); the only non-deterministic column, kept out of the digest.
    private static func now() -> Millis { Millis((Date().timeIntervalSince1970 * 1000).rounded()) }
}

import AppStore
import Facts
import Foundation
import Ingest
import PlayStore
import SystemSQLite
import Testing
@testable import Ledger

@Suite struct SQLiteLedgerTests {
    @Test func createsTheSchemaByNamedMigrationsInWALModeAndReopens() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("ledger.sqlite")
        do {
            let ledger = try writableLedger(path)
            // Applying again changes nothing.
            #expect(try LedgerMigrator().migrate(ledger.sqlite) == [])
            #expect(try ledger.sqlite.strings("PRAGMA journal_mode") == ["wal"])
            #expect(try ledger.sqlite.tableNames() == ["facts", "files", "ledger_meta", "migrations",
                                                        "payload_dictionaries", "quarantine", "records", "reprocess_queue",
                                                        "reprocess_records", "reprocess_stash", "skipped_files"])
            #expect(try ledger.sqlite.strings("SELECT name FROM migrations ORDER BY name") == LedgerMigrations.all.map(\.name))
            // SQLite reads its reprocess queue in stored order: no provenance index (009, SQLite only).
            #expect(try ledger.sqlite.strings("SELECT name FROM sqlite_master WHERE tbl_name = 'reprocess_queue' AND type = 'index'")
                    == ["sqlite_autoindex_reprocess_queue_1"])
        }
        let reopened = try SQLiteLedger(path: path, access: .readOnly)
        #expect(try reopened.statistics() == IngestStatistics().withEveryWarning())
        #expect(try reopened.statistics().lastEventAt == nil)
        let standing = try reopened.standing(rulesVersion: 7)
        #expect(standing.ledgerId.count == 36)
        #expect(standing.isEmpty)
        #expect(!standing.isStale(for: 7))
    }

    @Test func readOnlyOpenOfAMissingDatabaseSaysSo() throws {
        let directory = try TemporaryDirectory()
        #expect {
            try SQLiteLedger(path: directory.file("none.sqlite"), access: .readOnly)
        } throws: { error in
            (error as? LedgerError)?.kind == .notFound
        }
        #expect(!FileManager.default.fileExists(atPath: directory.file("none.sqlite")))
    }

    /// `--db` pointed at some other SQLite database: refused for writing and reading, and left byte for byte as
    /// it was (no tables added, not even switched to WAL).
    @Test func aDatabaseThatIsNotALedgerIsRefusedAndLeftUnchanged() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("app.db")
        do {
            let other = try SQLiteConnection(path: path, mode: .readWrite)
            try other.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users VALUES (1, 'a')")
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        for access in [LedgerAccess.readWrite, .readOnly] {
            #expect {
                let ledger = try SQLiteLedger(path: path, access: access)
                _ = try ledger.lockForWriting(.exclusive, timeout: .seconds(1))
            } throws: { error in
                guard let error = error as? LedgerError else { return false }
                return error.kind == .foreign && error.message.contains("not a subledger ledger")
            }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    /// A ledger whose `migrations` names a step this program does not know was written by a later release:
    /// refused for writing and reading, unchanged.
    @Test func aLedgerOfALaterReleaseIsRefused() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("later.sqlite")
        try writableLedger(path).sqlite.execute("INSERT INTO migrations (name, applied_at) VALUES ('999-from-the-future', 0)")
        for access in [LedgerAccess.readWrite, .readOnly] {
            #expect {
                try SQLiteLedger(path: path, access: access)
            } throws: { error in
                guard let error = error as? LedgerError else { return false }
                return error.kind == .newerLedger && error.message.contains("999-from-the-future")
                    && error.message.contains("upgrade subledger")
            }
        }
    }

    /// SQLite counts outcomes in one pass of its own (``SQLiteLedger/outcomeCounts(run:)``), not with the grouping
    /// query PostgreSQL runs: both give the same counts. A used record is a test purchase's only when a record of
    /// its platform and subject is excluded as `test` (another platform's record with the same subject is not),
    /// whichever run stored either.
    @Test func outcomesCountedInOnePassAreThoseOfTheGroupingQuery() throws {
        let directory = try TemporaryDirectory()
        let ledger = try writableLedger(directory.file("outcomes.sqlite"))
        let records: [StoredRecord] = [
            storedRecord("uuid:1", subject: "tok-a", source: .googleSubscriptionV2),
            storedRecord("uuid:2", subject: "tok-b", flags: .receivedAtInSeconds, source: .googleRTDN),
            storedRecord("uuid:3", subject: "tok-c", source: .googleSubscriptionV2, run: "other"),
            storedRecord("uuid:4", outcome: .excluded(.sandbox), subject: "tok-d", source: .googleRTDN),
            storedRecord("uuid:5", subject: "tok-b", source: .googleSubscriptionV1),
            storedRecord("uuid:6", outcome: .excluded(.test), subject: "tok-a", source: .googleRTDN),
            storedRecord("uuid:7", subject: "tok-a", flags: .receivedAtInSeconds, source: .googleSubscriptionV1, run: "other"),
            storedRecord("uuid:8", subject: "tok-a", source: .appleNotificationV2),
            storedRecord("uuid:9", subject: nil, source: .googleSubscriptionV1),
            storedRecord("uuid:10", outcome: .excluded(.test), subject: "tok-e", source: .googleSubscriptionV2, run: "other"),
        ]
        try transaction(ledger) { (ledger: SQLiteLedger) throws in
            for record in records { _ = try ledger.store(record, facts: []) }
        }
        let whole = try ledger.recordOutcomes(run: nil)
        #expect(whole.used == 5 && whole.excludedByReason == ["sandbox": 1, "test": 4] && whole.receivedInSeconds == 2)
        #expect(whole.bySource == [
            SourceCount(source: "apple.notification.v2", used: 1, excluded: 0),
            SourceCount(source: "google.rtdn", used: 1, excluded: 2),
            SourceCount(source: "google.subscription.v1", used: 2, excluded: 1),
            SourceCount(source: "google.subscription.v2", used: 1, excluded: 2),
        ])
        let run = try ledger.recordOutcomes(run: "test")
        #expect(run.used == 4 && run.excludedByReason == ["sandbox": 1, "test": 2] && run.receivedInSeconds == 1)
        #expect(try ledger.outcomeCounts(run: nil) == ledger.groupedOutcomes(LedgerSchema.recordOutcomes, []))
        #expect(try ledger.outcomeCounts(run: "test") == ledger.groupedOutcomes(LedgerSchema.runOutcomes, [.text("test")]))
    }

    /// The same on 3,000 records of random sources, outcomes, runs and subjects (a few hundred subjects, so that
    /// most have several records and many a test record among them).
    @Test func randomRecordsCountAsTheGroupingQueryCountsThem() throws {
        let directory = try TemporaryDirectory()
        let ledger = try writableLedger(directory.file("random.sqlite"))
        var generator = SystemRandomNumberGenerator()
        let sources: [SourceKind] = [.googleRTDN, .googleSubscriptionV1, .googleSubscriptionV2, .appleNotificationV2]
        let outcomes: [StoredRecord.Outcome] = [.used, .used, .used, .excluded(.test), .excluded(.sandbox)]
        try transaction(ledger) { (ledger: SQLiteLedger) throws in
            for index in 0..<3000 {
                let subject = Int.random(in: 0..<400, using: &generator)
                _ = try ledger.store(storedRecord("uuid:\(index)", outcome: outcomes.randomElement(using: &generator)!,
                                                  subject: subject == 0 ? nil : "tok-\(subject)",
                                                  flags: Bool.random(using: &generator) ? .receivedAtInSeconds : [],
                                                  source: sources.randomElement(using: &generator)!,
                                                  run: Bool.random(using: &generator) ? "test" : "other"),
                                     facts: [])
            }
        }
        let whole = try ledger.outcomeCounts(run: nil)
        #expect(whole.used + whole.excluded == 3000 && whole.excludedByReason["test", default: 0] > 600)
        #expect(whole == (try ledger.groupedOutcomes(LedgerSchema.recordOutcomes, [])))
        let run = try ledger.outcomeCounts(run: "test")
        #expect(run == (try ledger.groupedOutcomes(LedgerSchema.runOutcomes, [.text("test")])))
        // A filter of 64 bits seems to hold nearly every subject: the probes alone tell, and the counts stay.
        ledger.testSubjectFilterBitsLog2 = 6
        #expect(try ledger.outcomeCounts(run: nil) == whole)
        #expect(try ledger.outcomeCounts(run: "test") == run)
    }

    /// The filter never forgets a subject it holds, and of subjects it never held, few seem held.
    @Test func theTestSubjectFilterHoldsWhatWasInsertedAndLittleElse() {
        var filter = TestSubjectFilter()
        func ask(_ platform: String, _ subject: String, insert: Bool) -> Bool {
            Array(platform.utf8).withUnsafeBytes { platform in
                Array(subject.utf8).withUnsafeBytes { subject in
                    if insert { filter.insert(platform: platform, subject: subject) }
                    return filter.mayContain(platform: platform, subject: subject)
                }
            }
        }
        #expect((0..<50_000).allSatisfy { ask("google", "token-\($0)", insert: true) })
        #expect((0..<50_000).allSatisfy { ask("google", "token-\($0)", insert: false) })
        let seemingly = (50_000..<100_000).filter { ask("google", "token-\($0)", insert: false) }.count
            + (0..<50_000).filter { ask("apple", "token-\($0)", insert: false) }.count
        #expect(seemingly < 100)
    }

    /// Text is bound up to its first NUL, as when strings were passed to SQLite as C strings: a fact of a ledger
    /// written before keeps its key, and an empty string stays text, not NULL.
    @Test func textEndsAtItsFirstNulAndEmptyTextIsNotNull() throws {
        let directory = try TemporaryDirectory()
        let ledger = try writableLedger(directory.file("nul.sqlite"))
        try transaction(ledger) { (ledger: SQLiteLedger) throws in
            _ = try ledger.store(storedRecord("uuid:r1", file: "a\u{0}b.ndjson", member: ""), facts: [])
        }
        #expect(try ledger.sqlite.strings("SELECT file || '|' || member || '|' || typeof(member) FROM records")
                == ["a||text"])
    }

    /// A ledger written before `008-partial-indexes` (indexes only) is read as it is and is not stale: upgrading
    /// subledger must not make a nightly job reprocess years of records, or refuse `report`. The next writer
    /// adds the indexes.
    @Test func aLedgerWaitingOnlyForAnIndexIsReadableAndNotStale() throws {
        try expectIndexStepWaitsForTheWriter("008-partial-indexes",
                                             undo: ["DROP INDEX records_test_subjects", "DROP INDEX records_in_seconds",
                                                    "DROP INDEX quarantine_parts"],
                                             then: "SELECT name FROM sqlite_schema WHERE name LIKE 'records_%' ORDER BY name",
                                             gives: ["records_by_bucket", "records_by_run", "records_in_seconds",
                                                     "records_test_subjects", "records_without_payload"])
    }

    /// The same for `009-sqlite-queue-in-stored-order` (SQLite only), which drops the queue's provenance index.
    @Test func aLedgerWaitingToDropTheQueueIndexIsReadableAndTheWriterDropsIt() throws {
        try expectIndexStepWaitsForTheWriter("009-sqlite-queue-in-stored-order",
                                             undo: ["CREATE INDEX reprocess_queue_by_provenance ON reprocess_queue (file, member, position, origin, key)"],
                                             then: "SELECT name FROM sqlite_schema WHERE tbl_name = 'reprocess_queue' AND type = 'index'",
                                             gives: ["sqlite_autoindex_reprocess_queue_1"])
    }

    /// The same for `010-records-without-payload`, the partial index that finds a ledger from before payloads
    /// were kept without scanning every record.
    @Test func aLedgerWaitingForThePayloadlessIndexIsReadableAndTheWriterAddsIt() throws {
        try expectIndexStepWaitsForTheWriter("010-records-without-payload", undo: ["DROP INDEX records_without_payload"],
                                             then: "SELECT sql FROM sqlite_schema WHERE name = 'records_without_payload'",
                                             gives: ["CREATE INDEX records_without_payload ON records (file) WHERE payload IS NULL"])
    }

    /// A ledger of one record set back to before `step` by `undo` is read as it is and not stale; once the next
    /// writer has opened it, the step is recorded and `query` gives `expected`.
    private func expectIndexStepWaitsForTheWriter(_ step: String, undo: [String], then query: String,
                                                  gives expected: [String]) throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("older.sqlite")
        try transaction(try writableLedger(path)) { (ledger: SQLiteLedger) throws in
            _ = try ledger.store(storedRecord("uuid:r1"), facts: [googleFact("tok-a")])
            try ledger.setRulesVersion(7)
        }
        let older = try SQLiteConnection(path: path, mode: .readWrite)
        for statement in undo { try older.execute(statement) }
        try older.execute("DELETE FROM migrations WHERE name = '\(step)'")
        let reader = try SQLiteLedger(path: path, access: .readOnly)
        #expect(try reader.standing(rulesVersion: 7).isStale(for: 7) == false)
        #expect(try reader.statistics().used == 1)
        _ = try writableLedger(path)
        #expect(try older.strings(query) == expected)
        #expect(try older.strings("SELECT name FROM migrations WHERE name = '\(step)'") == [step])
    }

    /// A ledger from before schema versions (four tables, user_version 0) cannot be upgraded: refused.
    @Test func aLedgerFromBeforeSchemaVersionsIsRefused() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("old.sqlite")
        do {
            let connection = try SQLiteConnection(path: path, mode: .readWrite)
            for statement in LedgerMigrations.v3Tables.statements("") { try connection.execute(statement) }
        }
        #expect {
            try SQLiteLedger(path: path, access: .readWrite)
        } throws: { error in
            (error as? LedgerError)?.kind == .newerLedger && (error as? LedgerError)?.message.contains("into a new --db") == true
        }
    }

    @Test func theSameFactTwiceIsOneRowWithTheEarliestObservation() throws {
        let directory = try TemporaryDirectory()
        for order in [[1_709_294_409_000, 1_709_294_405_000], [1_709_294_405_000, 1_709_294_409_000]] as [[Millis]] {
            let ledger = try writableLedger(directory.file("facts-\(order[0]).sqlite"))
            try transaction(ledger) { (ledger: SQLiteLedger) throws in
                #expect(try ledger.store(storedRecord("msg:1"), facts: [googleFact("tok-a", observedAt: order[0])]))
                #expect(try ledger.store(storedRecord("msg:2"), facts: [googleFact("tok-a", observedAt: order[1])]))
            }
            let all = try groups(ledger)
            #expect(all.count == 1)
            #expect(all.first?.2 == [googleFact("tok-a", observedAt: 1_709_294_405_000)])
            #expect(try ledger.statistics().lastEventAt == 1_709_294_405_000)
        }
    }

    @Test func factsDifferingInAnyColumnButObservedAtAreDistinct() throws {
        let directory = try TemporaryDirectory()
        let ledger = try writableLedger(directory.file("l.sqlite"))
        var withoutCurrency = googleFact("tok-a")
        withoutCurrency.currency = nil
        var trial = googleFact("tok-a")
        trial.flags = .trial
        try transaction(ledger) { (ledger: SQLiteLedger) throws in
            _ = try ledger.store(storedRecord("msg:1"), facts: [googleFact("tok-a"), withoutCurrency, trial])
        }
        #expect(try groups(ledger).first?.2.count == 3)
    }

    @Test func aDuplicateRecordKeepsTheSmallestProvenanceWhateverTheOrder() throws {
        let directory = try TemporaryDirectory()
        let copies = [storedRecord("uuid:n1", file: "b.tar", member: "x.json", position: 0),
                      storedRecord("uuid:n1", file: "a.ndjson", position: 7),
                      storedRecord("uuid:n1", file: "b.tar", member: "a.json", position: 3)]
        var digests: Set<String> = []
        for (index, order) in [[0, 1, 2], [2, 1, 0], [1, 0, 2]].enumerated() {
            let ledger = try writableLedger(directory.file("r\(index).sqlite"))
            var stored: [Bool] = []
            try transaction(ledger) { (ledger: SQLiteLedger) throws in
                for i in order { stored.append(try ledger.store(copies[i], facts: [googleFact("tok")])) }
            }
            #expect(stored == [true, false, false])
            let row = try ledger.sqlite.prepare("SELECT file, member, position FROM records")
            #expect(try row.step())
            #expect(row.string(0) == "a.ndjson")
            #expect(row.string(1) == "")
            #expect(row.int64(2) == 7)
            #expect(try !row.step())
            digests.insert(try ledger.contentDigest())
        }
        #expect(digests.count == 1)
    }

    @Test func quarantineIsIdempotentPerPlaceAndRawBytes() throws {
        let directory = try TemporaryDirectory()
        let ledger = try writableLedger(directory.file("q.sqlite"))
        let garbage = Array(#"{"received_at": "2024-03-01T12:00:00Z", "body": {"#.utf8)
        let big = Array(repeating: UInt8(ascii: "x"), count: 10_000)
        try transaction(ledger) { (ledger: SQLiteLedger) throws in
            let first = quarantineEntry("malformed_json", "unexpected end of input at byte 52", at: Provenance(file: "a.ndjson", position: 3), raw: garbage)
            #expect(try ledger.quarantine(first))
            // Read again from the same place (a re-run, or the file grown by appends): still one row.
            let again = quarantineEntry("malformed_json", "unexpected end of input at byte 52", at: Provenance(file: "a.ndjson", position: 3), raw: garbage)
            #expect(try !ledger.quarantine(again))
            // The same bad bytes at another line of the file: another bad record.
            let repeated = quarantineEntry("malformed_json", "unexpected end of input at byte 52", at: Provenance(file: "a.ndjson", position: 9), raw: garbage)
            #expect(try ledger.quarantine(repeated))
            let otherFile = quarantineEntry("malformed_json", "cut", at: Provenance(file: "b.ndjson", position: 3), raw: garbage)
            #expect(try ledger.quarantine(otherFile))
            let large = quarantineEntry("unrecognized", "no known shape", at: Provenance(file: "c.tar", member: "big.json", position: 0), raw: big)
            #expect(try ledger.quarantine(large))
        }
        var listed: [QuarantinedRecord] = []
        try ledger.forEachQuarantined(reason: nil) { listed.append($0) }
        #expect(listed.map(\.provenance.description) == ["a.ndjson:3", "a.ndjson:9", "b.ndjson:3", "c.tar[big.json]:0"])
        #expect(listed.first?.raw == garbage)
        // Kept whole: a quarantined record can be tried again.
        #expect(listed.last?.raw == big)
        #expect(listed.last?.rawSize == 10_000)
        #expect(listed.allSatisfy { $0.isComplete })
        var unrecognized: [QuarantinedRecord] = []
        try ledger.forEachQuarantined(reason: "unrecognized") { unrecognized.append($0) }
        #expect(unrecognized.map(\.detail) == ["no known shape"])
        let statistics = try ledger.statistics()
        #expect(statistics.quarantined == 4)
        #expect(statistics.quarantinedByReason == ["malformed_json": 3, "unrecognized": 1])
    }

    @Test func statisticsAddUpAndFollowTheLatestReadOfEachFile() throws {
        let directory = try TemporaryDirectory()
        let ledger = try writableLedger(directory.file("s.sqlite"))
        let fileA = FileFingerprint(path: "a.ndjson", size: 100, sha256: String(repeating: "a", count: 64))
        let fileB = FileFingerprint(path: "b.ndjson", size: 50, sha256: String(repeating: "b", count: 64))
        try transaction(ledger) { (ledger: SQLiteLedger) throws in
            try ledger.beginFile(fileA)
            _ = try ledger.store(storedRecord("k1", file: "a.ndjson", position: 1), facts: [googleFact("t1", at: 1_700_000_000_000)])
            _ = try ledger.store(storedRecord("k2", file: "a.ndjson", position: 2, outcome: .excluded(.test)), facts: [])
            _ = try ledger.quarantine(quarantineEntry("malformed_json", "cut", at: Provenance(file: "a.ndjson", position: 3), raw: [0x7b]))
            try ledger.finishFile(fileA, counts: FileCounts(read: 3, used: 1, excluded: 1, quarantined: 1), damage: nil)
        }
        let claimer = try ledger.fileClaimer()
        #expect(claimer.claim(fileA) == .unchanged)
        #expect(claimer.claim(FileFingerprint(path: "a.ndjson", size: 101, sha256: "d" + fileA.sha256.dropFirst())) == .read)
        // The same bytes under another path: a copy, not read again.
        #expect(claimer.claim(FileFingerprint(path: "backup/a.ndjson", size: 100, sha256: fileA.sha256)) == .copy(of: "a.ndjson"))
        try transaction(ledger) { (ledger: SQLiteLedger) throws in
            try ledger.beginFile(fileB)
            // b repeats k1 (a duplicate), adds k3; then the gzip was cut.
            #expect(try !ledger.store(storedRecord("k1", file: "b.ndjson", position: 1), facts: [googleFact("t1", at: 1_700_000_000_000)]))
            #expect(try ledger.store(storedRecord("k3", file: "b.ndjson", position: 2), facts: [googleFact("t3", at: 1_710_000_000_000, observedAt: 1_710_000_009_000)]))
            try ledger.finishFile(fileB, counts: FileCounts(read: 2, used: 1, duplicate: 1),
                                  damage: Damage(file: "b.ndjson", offset: 4096, reason: "unexpected end of gzip stream"))
        }
        let statistics = try ledger.statistics()
        #expect(statistics.files == 2)
        #expect(statistics.read == 5)
        #expect(statistics.used == 2)
        #expect(statistics.excluded == 1)
        #expect(statistics.excludedByReason == ["test": 1])
        #expect(statistics.quarantined == 1)
        #expect(statistics.duplicate == 1)
        #expect(statistics.read == statistics.used + statistics.duplicate + statistics.excluded + statistics.quarantined)
        #expect(statistics.damagedFiles == [.init(file: "b.ndjson", offset: 4096, reason: "unexpected end of gzip stream")])
        #expect(statistics.firstEventAt == 1_700_000_000_000)
        #expect(statistics.lastEventAt == 1_710_000_009_000)
        #expect(try ledger.countsBySource() == [SourceCount(source: "google.subscription.v1", used: 2, excluded: 1)])
        let manifest = try ledger.files()
        #expect(manifest.map(\.state) == [.done, .done])
        #expect(manifest.last?.counts == FileCounts(read: 2, used: 1, duplicate: 1))
    }

    @Test func aKilledReadStaysReadingAndKeepsTheLargestCommittedPrefix() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("k.sqlite")
        let file = FileFingerprint(path: "a.ndjson", size: 100, sha256: String(repeating: "c", count: 64))
        do {
            let ledger = try writableLedger(path)
            try transaction(ledger) { (ledger: SQLiteLedger) throws in
                try ledger.beginFile(file)
                _ = try ledger.store(storedRecord("k1"), facts: [])
                _ = try ledger.store(storedRecord("k2", position: 2), facts: [])
                try ledger.saveProgress(path: file.path, read: 2)
            }
            // The next batch is never committed: the process "dies".
            try ledger.beginTransaction()
            _ = try ledger.store(storedRecord("k3", position: 3), facts: [])
            ledger.rollbackTransaction()
        }
        let ledger = try writableLedger(path)
        #expect(try ledger.fileClaimer().claim(file) == .read)
        #expect(try ledger.files().first?.state == .reading)
        let statistics = try ledger.statistics()
        #expect(statistics.read == 2)
        #expect(statistics.used == 2)
        #expect(statistics.duplicate == 0)
    }

    @Test func fileFingerprintHashesTheBytes() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("abc.json")
        try Data("abc".utf8).write(to: URL(fileURLWithPath: path))
        let fingerprint = try FileFingerprint.of(path: path)
        #expect(fingerprint.size == 3)
        #expect(fingerprint.sha256 == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(throws: LedgerError.self) { try FileFingerprint.of(path: directory.file("missing.json")) }
    }

    @Test func contentDigestIsEqualForTwoInsertionOrders() throws {
        let directory = try TemporaryDirectory()
        typealias Step = (SQLiteLedger) throws -> Void
        let steps: [Step] = [
            { _ = try $0.store(storedRecord("msg:1", file: "a.ndjson", position: 1), facts: [googleFact("t1", observedAt: 9)]) },
            { _ = try $0.store(storedRecord("msg:1", file: "b.ndjson", position: 1), facts: [googleFact("t1", observedAt: 5)]) },
            { _ = try $0.store(storedRecord("msg:2", file: "b.ndjson", position: 2, outcome: .excluded(.sandbox)), facts: []) },
            { _ = try $0.store(storedRecord("msg:3", file: "b.ndjson", position: 3), facts: [link("t2", continues: "t1"), googleFact("t2")]) },
            { _ = try $0.quarantine(quarantineEntry("bad_signature", "x5c chain does not end at a trusted root", at: Provenance(file: "c.json", position: 0), raw: Array("e30.e30.sig".utf8))) },
        ]
        let forward = try writableLedger(directory.file("f.sqlite"))
        try transaction(forward) { (ledger: SQLiteLedger) throws in for step in steps { try step(ledger) } }
        let backward = try writableLedger(directory.file("b.sqlite"))
        try transaction(backward) { (ledger: SQLiteLedger) throws in for step in steps.reversed() { try step(ledger) } }
        #expect(try forward.contentDigest() == backward.contentDigest())
        let partial = try writableLedger(directory.file("p.sqlite"))
        try transaction(partial) { (ledger: SQLiteLedger) throws in for step in steps.dropLast() { try step(ledger) } }
        #expect(try partial.contentDigest() != forward.contentDigest())
    }

    /// A new ledger has pages of 16 KiB (fewer reads and writes of the facts tree per commit) and a 64 MiB page
    /// cache, and keeps its page size when opened again.
    @Test func aNewLedgerHasPagesOf16KiBAndA64MiBCache() throws {
        let directory = try TemporaryDirectory()
        func pragma(_ ledger: SQLiteLedger, _ name: String) throws -> Int64 {
            let statement = try ledger.sqlite.prepare("PRAGMA \(name)")
            #expect(try statement.step())
            return statement.int64(0)
        }
        let ledger = try writableLedger(directory.file("p.sqlite"))
        #expect(try pragma(ledger, "page_size") == 16_384)
        #expect(try pragma(ledger, "cache_size") == -65_536)
        let again = try writableLedger(directory.file("p.sqlite"))
        #expect(try pragma(again, "page_size") == 16_384)
    }

    /// Facts wait in the stage for their transaction's commit and go in in key order
    /// (``SQLiteLedger/insertPendingFacts()``): a query inside the transaction still sees them, a rollback drops
    /// them, and a transaction of more facts than wait at once (written in two orders) gives the same ledger, with
    /// every fact and each one's earliest statement.
    @Test func factsWaitingForTheCommitAreSeenDroppedAndMergedAsIfWrittenAtOnce() throws {
        let directory = try TemporaryDirectory()
        let ledger = try writableLedger(directory.file("w.sqlite"))
        try ledger.beginTransaction()
        _ = try ledger.store(storedRecord("msg:1", subject: "tok-a"), facts: [googleFact("tok-a")])
        #expect(ledger.pendingFactCount == 1)
        #expect(try ledger.facts(ofSubject: "tok-a").map(\.fact) == [googleFact("tok-a")])
        #expect(ledger.pendingFactCount == 0)
        _ = try ledger.store(storedRecord("msg:2", subject: "tok-b"), facts: [googleFact("tok-b")])
        #expect(ledger.pendingFactCount == 1)
        ledger.rollbackTransaction()
        #expect(ledger.pendingFactCount == 0)
        let staged = try ledger.sqlite.prepare("SELECT COUNT(*) FROM temp.facts_stage")
        #expect(try staged.step())
        #expect(staged.int64(0) == 0)
        #expect(try ledger.facts(ofSubject: "tok-a").isEmpty && ledger.facts(ofSubject: "tok-b").isEmpty)
        // The next transaction commits its own facts and none of the dropped ones.
        try transaction(ledger) { (ledger: SQLiteLedger) throws in
            _ = try ledger.store(storedRecord("msg:3", subject: "tok-c"), facts: [googleFact("tok-c")])
        }
        #expect(try ledger.facts(ofSubject: "tok-c").map(\.fact) == [googleFact("tok-c")])
        #expect(try ledger.facts(ofSubject: "tok-a").isEmpty && ledger.facts(ofSubject: "tok-b").isEmpty)

        // One record per 16 facts over many subjects, each fact stated twice (a later copy first).
        let limit = 4_096
        let count = limit + 1_024
        let statements: [(StoredRecord, [Fact])] = (0..<(2 * count / 16)).map { batch in
            let copy = batch / (count / 16)
            let facts = (0..<16).map { offset -> Fact in
                let n = (batch % (count / 16)) * 16 + offset
                return googleFact("tok-\(n % 5_000)", at: 1_709_294_400_000 + Millis(n), observedAt: 1_709_294_500_000 - Millis(copy))
            }
            return (storedRecord("msg:\(batch)", subject: "tok-\(batch)"), facts)
        }
        var digests: [String] = []
        for (name, order) in [("forward", statements), ("backward", statements.reversed())] {
            let ledger = try writableLedger(directory.file("\(name).sqlite"))
            ledger.pendingFactsLimit = limit
            try transaction(ledger) { (ledger: SQLiteLedger) throws in
                for (record, facts) in order { _ = try ledger.store(record, facts: facts) }
            }
            let all = try groups(ledger).flatMap(\.2)
            #expect(all.count == count)
            #expect(all.allSatisfy { $0.observedAt == 1_709_294_500_000 - 1 })
            digests.append(try ledger.contentDigest())
        }
        #expect(digests[0] == digests[1])
    }
}

@Suite struct StatedFactsTests {
    /// A fact stated again later than the copy written is not staged (the merge keeps the earliest statement); one
    /// stated earlier, or at the same time by another record, is. The commit keeps what the connection wrote, and
    /// a statement of the ledger's on the facts table (which may delete them) forgets it, so no fact is lost.
    @Test func aFactStatedAgainLaterIsNotStagedTwice() throws {
        let directory = try TemporaryDirectory()
        let ledger = try writableLedger(directory.file("s.sqlite"))
        let at: Millis = 1_709_294_400_000
        func state(_ record: String, observedAt: Millis) throws {
            _ = try ledger.store(storedRecord(record, subject: "tok-a"), facts: [googleFact("tok-a", at: at, observedAt: observedAt)])
        }
        try ledger.beginTransaction()
        try state("msg:2", observedAt: at + 2)
        try state("msg:3", observedAt: at + 3)
        #expect(ledger.pendingFactCount == 1)
        try state("msg:9", observedAt: at + 1)
        #expect(ledger.pendingFactCount == 2)
        try state("msg:1", observedAt: at + 1)
        #expect(ledger.pendingFactCount == 3)
        try state("msg:0", observedAt: at + 2)
        #expect(ledger.pendingFactCount == 3)
        try ledger.commitTransaction()

        try transaction(ledger) { (ledger: SQLiteLedger) throws in
            try state("msg:5", observedAt: at + 5)
            #expect(ledger.pendingFactCount == 0)
            let merged = try ledger.facts(ofSubject: "tok-a")
            #expect(merged.map(\.fact.observedAt) == [at + 1] && merged.map(\.record) == ["msg:1"])
            try ledger.execute(LedgerSchema.deleteFacts, [])
            try state("msg:4", observedAt: at + 4)
            #expect(ledger.pendingFactCount == 1)
        }
        let again = try ledger.facts(ofSubject: "tok-a")
        #expect(again.map(\.fact.observedAt) == [at + 4] && again.map(\.record) == ["msg:4"])
    }

    /// A new key beyond the capacity forgets the others: their repeats are written again, never lost.
    @Test func aFullSetForgetsItsKeysAndAdmitsTheirRepeats() {
        var stated = StatedFacts(capacity: 2)
        let facts = ["tok-a", "tok-b", "tok-c"].map { KeyedFact(googleFact($0)) }
        let later = KeyedFact(googleFact("tok-a", observedAt: 1_709_294_406_000))
        func admits(_ fact: KeyedFact) -> Bool { stated.admits(fact.key, observedAt: fact.fact.observedAt) }
        #expect(admits(facts[0]) && admits(facts[1]))
        #expect(!admits(later))
        #expect(admits(facts[2]))
        #expect(admits(later))
    }
}

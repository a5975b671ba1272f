import Facts
import Foundation
import Ingest
import SystemSQLite
import Testing
@testable import Ledger

@Suite struct SQLiteLedgerTests {
    @Test func createsTheSchemaInWALModeAndReopens() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("ledger.sqlite")
        do {
            let ledger = try SQLiteLedger(path: path)
            let journal = try ledger.sqlite.prepare("PRAGMA journal_mode")
            #expect(try journal.step())
            #expect(journal.string(0) == "wal")
            let tables = try ledger.sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            var names: [String] = []
            while try tables.step() { names.append(tables.string(0)) }
            #expect(names == ["facts", "files", "quarantine", "records", "skipped_files"])
        }
        let reopened = try SQLiteLedger(path: path, mode: .readOnly)
        #expect(try reopened.statistics() == IngestStatistics())
        #expect(try reopened.statistics().lastEventAt == nil)
    }

    @Test func readOnlyOpenOfAMissingDatabaseSaysSo() throws {
        let directory = try TemporaryDirectory()
        #expect {
            try SQLiteLedger(path: directory.file("none.sqlite"), mode: .readOnly)
        } throws: { error in
            (error as? LedgerError)?.kind == .notFound
        }
        #expect(!FileManager.default.fileExists(atPath: directory.file("none.sqlite")))
    }

    /// A ledger of another schema version (here: one from before versions, user_version 0) is refused for
    /// ingest and for reading, with what to do, and is left unchanged.
    @Test func aLedgerOfAnotherSchemaVersionIsRefused() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("old.sqlite")
        try SQLiteLedger(path: path).sqlite.execute("PRAGMA user_version = 0")
        for mode in [SQLiteLedger.Mode.readWrite, .readOnly] {
            #expect {
                try SQLiteLedger(path: path, mode: mode)
            } throws: { error in
                guard let error = error as? LedgerError else { return false }
                return error.kind == .corrupt && error.message.contains("earlier version of subledger")
                    && error.message.contains("into a new --db")
            }
        }
        var version: OpaquePointer?
        var database: OpaquePointer?
        sqlite3_open(path, &database)
        sqlite3_prepare_v2(database, "PRAGMA user_version", -1, &version, nil)
        #expect(sqlite3_step(version) == SQLITE_ROW && sqlite3_column_int64(version, 0) == 0)
        sqlite3_finalize(version)
        sqlite3_close(database)
    }

    @Test func theSameFactTwiceIsOneRowWithTheEarliestObservation() throws {
        let directory = try TemporaryDirectory()
        for order in [[1_709_294_409_000, 1_709_294_405_000], [1_709_294_405_000, 1_709_294_409_000]] as [[Millis]] {
            let ledger = try SQLiteLedger(path: directory.file("facts-\(order[0]).sqlite"))
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
        let ledger = try SQLiteLedger(path: directory.file("l.sqlite"))
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
            let ledger = try SQLiteLedger(path: directory.file("r\(index).sqlite"))
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
        let ledger = try SQLiteLedger(path: directory.file("q.sqlite"))
        let garbage = Array(#"{"received_at": "2024-03-01T12:00:00Z", "body": {"#.utf8)
        let big = Array(repeating: UInt8(ascii: "x"), count: 10_000)
        try transaction(ledger) { (ledger: SQLiteLedger) throws in
            let first = QuarantineEntry(reason: "malformed_json", detail: "unexpected end of input at byte 52",
                                        provenance: Provenance(file: "a.ndjson", position: 3), rawBytes: garbage)
            #expect(try ledger.quarantine(first))
            // Read again from the same place (a re-run, or the file grown by appends): still one row.
            let again = QuarantineEntry(reason: "malformed_json", detail: "unexpected end of input at byte 52",
                                        provenance: Provenance(file: "a.ndjson", position: 3), rawBytes: garbage)
            #expect(try !ledger.quarantine(again))
            // The same bad bytes at another line of the file: another bad record.
            let repeated = QuarantineEntry(reason: "malformed_json", detail: "unexpected end of input at byte 52",
                                           provenance: Provenance(file: "a.ndjson", position: 9), rawBytes: garbage)
            #expect(try ledger.quarantine(repeated))
            let otherFile = QuarantineEntry(reason: "malformed_json", detail: "cut",
                                            provenance: Provenance(file: "b.ndjson", position: 3), rawBytes: garbage)
            #expect(try ledger.quarantine(otherFile))
            let large = QuarantineEntry(reason: "unrecognized", detail: "no known shape",
                                        provenance: Provenance(file: "c.tar", member: "big.json", position: 0), rawBytes: big)
            #expect(try ledger.quarantine(large))
        }
        var listed: [QuarantineEntry] = []
        try ledger.forEachQuarantined(reason: nil) { listed.append($0) }
        #expect(listed.map(\.provenance.description) == ["a.ndjson:3", "a.ndjson:9", "b.ndjson:3", "c.tar[big.json]:0"])
        #expect(listed.first?.raw == garbage)
        #expect(listed.last?.raw.count == QuarantineEntry.keptRawBytes)
        #expect(listed.last?.rawSize == 10_000)
        var unrecognized: [QuarantineEntry] = []
        try ledger.forEachQuarantined(reason: "unrecognized") { unrecognized.append($0) }
        #expect(unrecognized.map(\.detail) == ["no known shape"])
        let statistics = try ledger.statistics()
        #expect(statistics.quarantined == 4)
        #expect(statistics.quarantinedByReason == ["malformed_json": 3, "unrecognized": 1])
    }

    @Test func statisticsAddUpAndFollowTheLatestReadOfEachFile() throws {
        let directory = try TemporaryDirectory()
        let ledger = try SQLiteLedger(path: directory.file("s.sqlite"))
        let fileA = FileFingerprint(path: "a.ndjson", size: 100, sha256: String(repeating: "a", count: 64))
        let fileB = FileFingerprint(path: "b.ndjson", size: 50, sha256: String(repeating: "b", count: 64))
        try transaction(ledger) { (ledger: SQLiteLedger) throws in
            try ledger.beginFile(fileA)
            _ = try ledger.store(storedRecord("k1", file: "a.ndjson", position: 1), facts: [googleFact("t1", at: 1_700_000_000_000)])
            _ = try ledger.store(storedRecord("k2", file: "a.ndjson", position: 2, outcome: .excluded(.test)), facts: [])
            _ = try ledger.quarantine(QuarantineEntry(reason: "malformed_json", detail: "cut",
                                                      provenance: Provenance(file: "a.ndjson", position: 3), rawBytes: [0x7b]))
            try ledger.finishFile(fileA, counts: FileCounts(read: 3, used: 1, excluded: 1, quarantined: 1), damage: nil)
        }
        #expect(try ledger.isDone(fileA))
        #expect(try !ledger.isDone(FileFingerprint(path: "a.ndjson", size: 101, sha256: fileA.sha256)))
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
            let ledger = try SQLiteLedger(path: path)
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
        let ledger = try SQLiteLedger(path: path)
        #expect(try !ledger.isDone(file))
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
            { _ = try $0.quarantine(QuarantineEntry(reason: "bad_signature", detail: "x5c chain does not end at a trusted root",
                                                    provenance: Provenance(file: "c.json", position: 0), rawBytes: Array("e30.e30.sig".utf8))) },
        ]
        let forward = try SQLiteLedger(path: directory.file("f.sqlite"))
        try transaction(forward) { (ledger: SQLiteLedger) throws in for step in steps { try step(ledger) } }
        let backward = try SQLiteLedger(path: directory.file("b.sqlite"))
        try transaction(backward) { (ledger: SQLiteLedger) throws in for step in steps.reversed() { try step(ledger) } }
        #expect(try forward.contentDigest() == backward.contentDigest())
        let partial = try SQLiteLedger(path: directory.file("p.sqlite"))
        try transaction(partial) { (ledger: SQLiteLedger) throws in for step in steps.dropLast() { try step(ledger) } }
        #expect(try partial.contentDigest() != forward.contentDigest())
    }
}

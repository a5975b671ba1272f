import Foundation
@testable import Ledger
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The ledger traps of issue 15 a new user falls into, through the real binary: each test reproduces what was
/// seen (exit 0 and a silent double count, a foreign database changed, raw Foundation or SQL text) and pins
/// what `cli.md` asks instead.
@Suite(.serialized)
struct LedgerTrapProcessTests {
    /// Texts no message may show (cli.md: "never raw Foundation error domains or SQL").
    static let rawTexts = ["NSCocoaErrorDomain", "Error Domain=", "NSPOSIXErrorDomain", "UserInfo=", "SELECT ", "INSERT ",
                           "CREATE ", "sqlite_master", "(while running", "(preparing", "running SELECT"]

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    /// Item 2: one archive reachable by several paths (a copy in `backup/`, a symlink, `./x` and `x`) is read
    /// once; every other path is a skipped file "already ingested as PATH" (stdout JSON and stderr), exit 1.
    @Test func theSameArchiveUnderAnotherPathIsReadOnce() throws {
        let directory = try TemporaryDirectory()
        try IngestFixtures.write(IngestFixtures.lines(0..<10), to: directory.file("a.ndjson"))
        try FileManager.default.createDirectory(atPath: directory.file("backup"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: directory.file("a.ndjson"), toPath: directory.file("backup/a.ndjson"))
        try FileManager.default.createSymbolicLink(atPath: directory.file("link.ndjson"), withDestinationPath: "a.ndjson")

        let first = try SubledgerProcess.run(["ingest", "--db", "l.sqlite", "--json", "a.ndjson", "backup"], in: directory, tag: "first")
        #expect(first.status == 1, "a skipped copy is said with exit 1: \(first.stderr)")
        let counts = try Self.json(first.stdout)
        #expect((counts["records"] as? [String: Int])?["read"] == 21, "the copy's records are not read again: \(first.stdout)")
        let skipped = counts["skipped_files"] as? [[String: String]]
        #expect(skipped == [["file": "backup/a.ndjson", "reason": "already ingested as a.ndjson"]], "\(first.stdout)")
        #expect(first.stderr.contains("backup/a.ndjson: already ingested as a.ndjson"), "said on stderr too: \(first.stderr)")

        let second = try SubledgerProcess.run(["ingest", "--db", "l.sqlite", "--json", "./a.ndjson", "link.ndjson", "backup/a.ndjson"],
                                              in: directory, tag: "second")
        let again = try Self.json(second.stdout)
        #expect((again["records"] as? [String: Int])?["read"] == 0, "no path of the same bytes is read twice: \(second.stdout)")
        #expect(try SQLiteLedger(path: directory.file("l.sqlite"), access: .readOnly).statistics().read == 21)

        let plain = try SubledgerProcess.run(["ingest", "--db", "plain.sqlite", "a.ndjson", "link.ndjson"], in: directory, tag: "plain")
        #expect(plain.status == 1)
        #expect(plain.stderr.contains("link.ndjson: already ingested as a.ndjson"), "stderr, without --json too: \(plain.stderr)")
    }

    /// An empty archive packed for each day with nothing in it has the same bytes every day: the copy of a file
    /// that held no records is no skipped input (exit 0), where a copy of one that held records is (exit 1).
    @Test func anEmptyArchiveOfEachEmptyDayIsNoSkippedInput() throws {
        let directory = try TemporaryDirectory()
        let empty = Data(count: 10_240)  // `tar cf day.tar -T /dev/null`
        for day in ["2024-03-01.tar", "2024-03-02.tar", "2024-03-03.tar"] {
            try empty.write(to: URL(fileURLWithPath: directory.file(day)))
        }
        let first = try SubledgerProcess.run(["ingest", "--db", "l.sqlite", "2024-03-01.tar"], in: directory, tag: "first")
        #expect(first.status == 0, "\(first.stderr)")
        let next = try SubledgerProcess.run(["ingest", "--db", "l.sqlite", "--json", "2024-03-02.tar", "2024-03-03.tar"],
                                            in: directory, tag: "next")
        #expect(next.status == 0, "\(next.stderr)")
        #expect((try Self.json(next.stdout)["skipped_files"] as? [Any])?.isEmpty == true, "\(next.stdout)")
        #expect(next.stderr.contains("2 with the same bytes as a file holding no records"), "\(next.stderr)")
    }

    /// Item 4: `report`, `status` and `quarantine` open the ledger read-only, so they work in a folder the user
    /// cannot write (no WAL or shared-memory file can be made there) and leave the folder as it was.
    @Test func readingCommandsWorkOnALedgerInAReadOnlyFolder() throws {
        let directory = try TemporaryDirectory()
        try IngestFixtures.write(IngestFixtures.lines(0..<50), to: directory.file("a.ndjson"))
        try FileManager.default.createDirectory(atPath: directory.file("archive"), withIntermediateDirectories: true)
        let ingest = try SubledgerProcess.run(["ingest", "--db", "archive/l.sqlite", "a.ndjson"], in: directory, tag: "ingest")
        #expect(ingest.status == 0, "\(ingest.stderr)")
        // The ledger as a backup restores it: one file, no WAL beside it, in a folder nobody may write.
        for leftover in ["archive/l.sqlite-wal", "archive/l.sqlite-shm", "archive/l.sqlite.lock"] {
            try? FileManager.default.removeItem(atPath: directory.file(leftover))
        }
        try FileManager.default.createDirectory(atPath: directory.file("out"), withIntermediateDirectories: true)
        chmod(directory.file("out"), 0o777)
        chmod(directory.file("archive/l.sqlite"), 0o444)
        chmod(directory.file("archive"), 0o555)
        defer { chmod(directory.file("archive"), 0o755) }
        let before = try FileManager.default.contentsOfDirectory(atPath: directory.file("archive"))

        let status = try SubledgerProcess.run(["status", "--db", "archive/l.sqlite", "--json"], in: directory, tag: "status",
                                              unprivileged: true)
        #expect(status.status == 0, "\(status.stderr)")
        #expect(try Self.json(status.stdout)["files"] as? Int == 1)
        let report = try SubledgerProcess.run(["report", "--db", "archive/l.sqlite", "--out", "out/r"], in: directory, tag: "report",
                                              unprivileged: true)
        #expect(report.status == 0, "\(report.stderr)")
        #expect(FileManager.default.fileExists(atPath: directory.file("out/r/summary.json")))
        let quarantine = try SubledgerProcess.run(["quarantine", "--db", "archive/l.sqlite"], in: directory, tag: "quarantine",
                                                  unprivileged: true)
        #expect(quarantine.status == 0, "\(quarantine.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.file("archive")) == before, "nothing written beside it")

        // Writing there is a configuration error in the user's words (exit 2), not an SQLite message.
        try IngestFixtures.write(IngestFixtures.lines(50..<60), to: directory.file("b.ndjson"))
        let write = try SubledgerProcess.run(["ingest", "--db", "archive/l.sqlite", "b.ndjson"], in: directory, tag: "write",
                                             unprivileged: true)
        #expect(write.status == 2, "\(write.stderr)")
        #expect(write.stderr.contains("archive/l.sqlite"), "\(write.stderr)")
        for raw in Self.rawTexts { #expect(!write.stderr.contains(raw), "\(write.stderr)") }
    }

    /// Item 4, the other half: reading commands work while an ingest writes the same ledger.
    @Test func readingCommandsWorkWhileAnIngestRuns() throws {
        let directory = try TemporaryDirectory()
        try IngestFixtures.write(IngestFixtures.lines(0..<100), to: directory.file("first.ndjson"))
        try IngestFixtures.write(IngestFixtures.lines(1000..<11000), to: directory.file("large.ndjson"))
        #expect(try SubledgerProcess.run(["ingest", "--db", "l.sqlite", "first.ndjson"], in: directory, tag: "first").status == 0)
        let (writer, wait) = try SubledgerProcess.start(["ingest", "--db", "l.sqlite", "large.ndjson"], in: directory, tag: "writer")
        var readsDuringIngest = 0
        while writer.isRunning {
            let status = try SubledgerProcess.run(["status", "--db", "l.sqlite", "--json"], in: directory, tag: "status")
            #expect(status.status == 0, "\(status.stderr)")
            let report = try SubledgerProcess.run(["report", "--db", "l.sqlite", "--out", "r", "--format", "csv"], in: directory, tag: "report")
            #expect(report.status == 0, "\(report.stderr)")
            if writer.isRunning { readsDuringIngest += 1 }
        }
        #expect(wait().status == 1, "the large file has garbage lines")
        #expect(readsDuringIngest > 0, "the ingest ended before a read could overlap it")
    }

    /// Item 5: `--db` pointed at another application's SQLite database (or at a file that is no database) is
    /// refused with exit 2 by every command, and the file is left byte for byte as it was.
    @Test func aForeignDatabaseIsRefusedAndLeftUnchanged() throws {
        let directory = try TemporaryDirectory()
        try IngestFixtures.write(IngestFixtures.lines(0..<10), to: directory.file("a.ndjson"))
        do {
            let other = try SQLiteConnection(path: directory.file("app.db"), mode: .readWrite)
            try other.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users VALUES (1, 'a')")
        }
        try Data("name,email\nann,ann@example.com\n".utf8).write(to: URL(fileURLWithPath: directory.file("people.csv")))
        for database in ["app.db", "people.csv"] {
            let before = try Data(contentsOf: URL(fileURLWithPath: directory.file(database)))
            let commands: [[String]] = [["ingest", "a.ndjson"], ["run", "a.ndjson"], ["report"], ["status"], ["quarantine"],
                                        ["reprocess"]]
            for command in commands {
                let arguments = [command[0], "--db", database] + command.dropFirst()
                let result = try SubledgerProcess.run(arguments, in: directory, tag: "foreign")
                #expect(result.status == 2, "\(arguments): exit \(result.status), \(result.stderr)")
                #expect(result.stderr.contains("\(database): not a subledger ledger"), "\(arguments): \(result.stderr)")
                for raw in Self.rawTexts { #expect(!result.stderr.contains(raw), "\(arguments): \(result.stderr)") }
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: directory.file(database))) == before, "\(database) changed")
            let beside = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix(database + "-") }
            #expect(beside.isEmpty, "no WAL or journal made beside \(database): \(beside)")
        }
    }

    /// Item 6: what the user named wrong (an output folder that cannot be made, a ledger in a missing folder or
    /// that is a folder) exits 2 with a message in the user's terms: the path, what is wrong, what to do; never
    /// Foundation's error domains or SQL.
    @Test func configurationErrorsExitTwoInTheUsersTerms() throws {
        let directory = try TemporaryDirectory()
        try IngestFixtures.write(IngestFixtures.lines(0..<10), to: directory.file("a.ndjson"))
        #expect(try SubledgerProcess.run(["ingest", "--db", "l.sqlite", "a.ndjson"], in: directory, tag: "ingest").status == 0)
        try Data("a file".utf8).write(to: URL(fileURLWithPath: directory.file("file")))
        let cases: [(arguments: [String], message: String)] = [
            (["report", "--db", "l.sqlite", "--out", "file"], "file is not a folder"),
            (["report", "--db", "l.sqlite", "--out", "file/reports"], "give another --out"),
            (["run", "--db", "l.sqlite", "--out", "file/reports", "a.ndjson"], "give another --out"),
            (["ingest", "--db", "missing/l.sqlite", "a.ndjson"], "missing/l.sqlite: cannot open the ledger file"),
            (["status", "--db", "missing/l.sqlite"], "missing/l.sqlite: no ledger database here"),
            (["ingest", "--db", ".", "a.ndjson"], "--db . is a folder"),
            (["status", "--db", "file"], "file: not a subledger ledger"),
            (["simulate", "--out", "file/sim", "--subscribers", "2", "--months", "1"], "cannot write "),
            (["quarantine", "--db", "l.sqlite", "--export", "file/q.ndjson"], "--export file/q.ndjson"),
            (["report", "--db", "l.sqlite", "--prices", "missing.csv"], "missing.csv"),
            (["report", "--db", "l.sqlite", "--currency", "DOLLARS", "--fx-rates", "missing.csv"], "--currency DOLLARS"),
        ]
        for (arguments, message) in cases {
            let result = try SubledgerProcess.run(arguments, in: directory, tag: "config")
            #expect(result.status == 2, "\(arguments): exit \(result.status), \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            for raw in Self.rawTexts { #expect(!result.stderr.contains(raw), "\(arguments): \(result.stderr)") }
        }
        #expect(try String(contentsOfFile: directory.file("file"), encoding: .utf8) == "a file")
        // `run` says so before its ingest, not after it: nothing was read into the ledger.
        let early = try SubledgerProcess.run(["run", "--db", "fresh.sqlite", "--out", "file/reports", "a.ndjson"], in: directory, tag: "early")
        #expect(early.status == 2)
        #expect(!FileManager.default.fileExists(atPath: directory.file("fresh.sqlite")), "\(early.stderr)")
    }
}

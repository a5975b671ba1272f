import Foundation
import Ledger
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issues 15.1, 15.3 and 18: what a user's folders and a damaged ledger do to the real binary. Every failure
/// caused by input is an exit code of `cli.md` with a message, never a hang, a signal or a backtrace.
@Suite(.serialized) struct HostileInputProcessTests {
    /// Runs the binary, killing it after `seconds`: a hang fails the test instead of the test run.
    static func run(_ arguments: [String], in directory: TemporaryDirectory, tag: String,
                    within seconds: Double = 60) throws -> SubledgerProcess.Result {
        let (process, wait) = try SubledgerProcess.start(arguments, in: directory, tag: tag)
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            Issue.record("subledger \(arguments.joined(separator: " ")) did not finish within \(seconds) s")
        }
        return wait()
    }

    /// One-letter paths in the working folder (`--db l`, `--partial p`, `--export q`), on which Foundation's
    /// `deletingLastPathComponent` traps: every command works as with longer names.
    @Test func oneLetterPathsAreFilesLikeAnyOther() throws {
        let directory = try TemporaryDirectory()
        try IngestFixtures.write(IngestFixtures.lines(0..<3), to: directory.file("i"))
        let ingest = try Self.run(["ingest", "--db", "l", "--json", "i"], in: directory, tag: "ingest")
        #expect(ingest.status == 0, "\(ingest.stderr)")
        #expect(ingest.stdout.contains(#""records":{"read":7,"used":6,"duplicate":0,"excluded":1,"quarantined":0}"#))
        let status = try Self.run(["status", "--db", "l"], in: directory, tag: "status")
        #expect(status.status == 0, "\(status.stderr)")
        let partial = try Self.run(["report", "--db", "l", "--shard", "1/1", "--partial", "p"], in: directory, tag: "partial")
        #expect(partial.status == 0 && FileManager.default.fileExists(atPath: directory.file("p")), "\(partial.stderr)")
        let export = try Self.run(["quarantine", "--db", "l", "--export", "q"], in: directory, tag: "export")
        #expect(export.status == 0 && FileManager.default.fileExists(atPath: directory.file("q")), "\(export.stderr)")
    }

    /// Issue 15.1: "A folder holding files with other extensions (.txt, .csv, a .json.bz2, a .log of ndjson):
    /// skipped without a word, exit 0. Recognise files by content (gzip/zip/tar magic, JSON); say every file
    /// skipped and why (skipped_files, stderr), exit 1. Dotfiles are not inputs." Issue 18.6: a FIFO in a folder
    /// is listed, never opened (opening it would wait for a writer forever).
    @Test func aFolderOfMixedFilesIsReadByContentAndEverySkipIsSaid() throws {
        let directory = try TemporaryDirectory()
        let inbox = directory.file("inbox")
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        try IngestFixtures.write(IngestFixtures.lines(0..<3), to: inbox + "/events.ndjson")
        // A log shipper's file of NDJSON under a name of its own: an input.
        try IngestFixtures.write(IngestFixtures.lines(3..<6), to: inbox + "/server.log")
        try Data("platform,product_id,currency,price,duration\napple,pro,USD,9.99,P1M\n".utf8).write(to: URL(fileURLWithPath: inbox + "/prices.csv"))
        try Data("BZh91AY&SY\u{1}\u{2}".utf8).write(to: URL(fileURLWithPath: inbox + "/old.json.bz2"))
        try Data("notes about the export\n".utf8).write(to: URL(fileURLWithPath: inbox + "/README.txt"))
        try Data("{}".utf8).write(to: URL(fileURLWithPath: inbox + "/.hidden.json"))
        #expect(mkfifo(inbox + "/pipe.ndjson", 0o600) == 0)

        let ingest = try Self.run(["ingest", "--db", "l.sqlite", "--json", "inbox"], in: directory, tag: "mixed")
        #expect(ingest.status == 1, "\(ingest.stderr)")
        let skipped = #""skipped_files":[{"file":"inbox/README.txt","reason":"not JSON, gzip, tar or zip (it starts with the bytes 6E 6F 74 65 73 20 61 62)"},{"file":"inbox/old.json.bz2","reason":"not JSON, gzip, tar or zip: bzip2-compressed: decompress it, or recompress it with gzip"},{"file":"inbox/pipe.ndjson","reason":"not a regular file: a FIFO (named pipe)"},{"file":"inbox/prices.csv","reason":"not JSON, gzip, tar or zip (it starts with the bytes 70 6C 61 74 66 6F 72 6D)"}]"#
        #expect(ingest.stdout.contains(skipped), "\(ingest.stdout)")
        #expect(ingest.stdout.contains(#""files":2,"records":{"read":13,"used":12,"duplicate":0,"excluded":1,"quarantined":0}"#))
        for file in ["inbox/README.txt", "inbox/old.json.bz2", "inbox/pipe.ndjson", "inbox/prices.csv"] {
            #expect(ingest.stderr.contains("skipped \(file): "), "one sentence each on stderr: \(file)")
        }
        #expect(!ingest.stdout.contains(".hidden.json") && !ingest.stderr.contains(".hidden.json"), "dotfiles are not inputs, silently")

        // `status` says everything so far.
        let status = try Self.run(["status", "--db", "l.sqlite", "--json"], in: directory, tag: "status")
        #expect(status.status == 0)
        #expect(status.stdout.contains(skipped))
        for file in ["inbox/README.txt", "inbox/old.json.bz2", "inbox/pipe.ndjson", "inbox/prices.csv"] {
            #expect(status.stderr.contains("skipped \(file): "), "status says each skipped file on stderr too: \(file)")
        }
        // A skipped file that becomes an input leaves the list.
        try FileManager.default.removeItem(atPath: inbox + "/prices.csv")
        try IngestFixtures.write(IngestFixtures.lines(6..<7), to: inbox + "/prices.csv")
        _ = try Self.run(["ingest", "--db", "l.sqlite", "inbox"], in: directory, tag: "again")
        let after = try Self.run(["status", "--db", "l.sqlite", "--json"], in: directory, tag: "status-again")
        #expect(!after.stdout.contains(#""file":"inbox/prices.csv""#))
    }

    /// Issue 15.3: "An empty folder, or a glob that matches nothing: exit 0 "0 files". That is almost always a
    /// typo in a nightly job: exit 2 with the path." Issue 18.6: a FIFO or a symbolic link loop named directly
    /// is "not a regular file" (exit 2, as a missing file named on the command line), at once.
    @Test func inputsThatStandForNothingAreUsageErrors() throws {
        let directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.file("empty"), withIntermediateDirectories: true)
        #expect(mkfifo(directory.file("pipe.ndjson"), 0o600) == 0)
        try FileManager.default.createSymbolicLink(atPath: directory.file("loop.json"), withDestinationPath: directory.file("loop.json"))
        let cases: [(input: String, message: String)] = [
            ("empty", "empty: the folder holds no files (hidden files are not inputs)"),
            ("archives/2025-06-*.ndjson.gz", "archives/2025-06-*.ndjson.gz: the pattern matches no file"),
            ("pipe.ndjson", "pipe.ndjson: not a regular file: a FIFO (named pipe)"),
            ("loop.json", "loop.json: not a regular file: a symbolic link loop"),
        ]
        for (index, (input, message)) in cases.enumerated() {
            let result = try Self.run(["ingest", "--db", "l.sqlite", input], in: directory, tag: "usage-\(index)", within: 20)
            #expect(result.status == 2, "\(input): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(result.stderr)")
        }
    }

    /// Issue 18.4: "Files whose names are not valid UTF-8 are skipped in folders with no word (named directly:
    /// "no such file"): handle paths as bytes." The shell writes the byte (a Latin-1 é), as a user's would.
    @Test func fileNamesThatAreNotUTF8AreRead() throws {
        let directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.file("latin1"), withIntermediateDirectories: true)
        try IngestFixtures.write(IngestFixtures.lines(0..<2), to: directory.file("plain.ndjson"))
        let script = """
            set -e
            cp plain.ndjson "latin1/caf$(printf '\\351').ndjson"
            cp plain.ndjson "direct-$(printf '\\351').ndjson"
            "$0" ingest --db folder.sqlite --json latin1
            "$0" ingest --db direct.sqlite --json "direct-$(printf '\\351').ndjson"
            """
        let process = try ChildProcess("/bin/sh", ["-c", script, SubledgerProcess.binary], directory: directory.path,
                                       environment: ProcessInfo.processInfo.environment,
                                       stdout: directory.file("sh.out"), stderr: directory.file("sh.err"))
        let status = process.waitForExit()
        let stdout = String(decoding: FileManager.default.contents(atPath: directory.file("sh.out")) ?? Data(), as: UTF8.self)
        let stderr = String(decoding: FileManager.default.contents(atPath: directory.file("sh.err")) ?? Data(), as: UTF8.self)
        #expect(status == 0, "\(stderr)")
        let counts = #""files":1,"records":{"read":5,"used":4,"duplicate":0,"excluded":1,"quarantined":0}"#
        #expect(stdout.components(separatedBy: counts).count == 3, "both runs read the file: \(stdout)")
        let ledger = try SQLiteLedger(path: directory.file("folder.sqlite"), access: .readOnly)
        #expect(try ledger.files().map { $0.fingerprint.path } == ["latin1/caf\\xE9.ndjson"])
    }

    /// Issue 18.5: "Flipped bytes in the ledger file changed counts (used 3181 -> 3180) and reports without a
    /// word." The same damage here: one record's outcome `used` becomes `usee`. `report` and `ingest` check the
    /// ledger when they open it and exit 2 saying how to recover; `status --verify` lists what it found.
    @Test func aDamagedLedgerIsSaidAndNothingIsReportedFromIt() throws {
        let directory = try TemporaryDirectory()
        try IngestFixtures.write(IngestFixtures.lines(0..<50), to: directory.file("a.ndjson"))
        let ingest = try Self.run(["ingest", "--db", "l.sqlite", "a.ndjson"], in: directory, tag: "ingest")
        #expect(ingest.status == 0, "\(ingest.stderr)")
        let sound = try Self.run(["status", "--db", "l.sqlite", "--verify"], in: directory, tag: "verify-sound")
        #expect(sound.status == 0, "\(sound.stderr)")
        #expect(sound.stdout.contains("verified: the ledger and its invariants are sound"))

        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory.file("l.sqlite"))))
        let pageSize = Int(bytes[16]) << 8 | Int(bytes[17])
        // A record's row holds its source and then its outcome, side by side (SQLite's record format): the
        // first `google.subscription.v1used` past the schema is a record's outcome, never the schema's text.
        let used = Array("google.subscription.v1used".utf8)
        let at = try #require((pageSize..<(bytes.count - used.count)).first { bytes[$0..<$0 + used.count].elementsEqual(used) })
        bytes[at + used.count - 1] = UInt8(ascii: "e")
        try Data(bytes).write(to: URL(fileURLWithPath: directory.file("l.sqlite")))

        let advice = "Restore the ledger from a backup, or rebuild it from the archives: move l.sqlite aside and run `subledger ingest` on all of them with a new --db"
        // Exit 2: a damaged ledger is an unreadable database (cli.md); no retry fixes it.
        let report = try Self.run(["report", "--db", "l.sqlite", "--out", "Reports"], in: directory, tag: "report")
        #expect(report.status == 2)
        #expect(report.stderr.contains("l.sqlite: the ledger is damaged (1 row(s) break the rule: a record's outcome is used or excluded). Nothing was changed. " + advice))
        #expect(!FileManager.default.fileExists(atPath: directory.file("Reports/summary.json")), "no report from a damaged ledger")
        let again = try Self.run(["ingest", "--db", "l.sqlite", "a.ndjson"], in: directory, tag: "ingest-damaged")
        #expect(again.status == 2)
        #expect(again.stderr.contains("the ledger is damaged"))
        let verify = try Self.run(["status", "--db", "l.sqlite", "--verify"], in: directory, tag: "verify")
        #expect(verify.status == 2)
        #expect(verify.stderr.contains("1 row(s) break the rule: a record's outcome is used or excluded"))
        let quarantine = try Self.run(["quarantine", "--db", "l.sqlite"], in: directory, tag: "quarantine-damaged")
        #expect(quarantine.status == 2, "the listing would look whole: \(quarantine.stderr)")
        #expect(quarantine.stderr.contains("the ledger is damaged"))
        #expect(!verify.stderr.contains("Fatal error") && !report.stderr.contains("Fatal error"))
    }

    /// `reprocess` rebuilds a ledger and never creates one: a mistyped --db, a missing or empty file, is exit 2
    /// as for `report`, and leaves nothing behind.
    @Test func reprocessOfALedgerThatIsNotThereIsAUsageError() throws {
        let directory = try TemporaryDirectory()
        #expect(FileManager.default.createFile(atPath: directory.file("empty.sqlite"), contents: Data()))
        for database in ["nothere.sqlite", "empty.sqlite"] {
            let reprocess = try Self.run(["reprocess", "--db", database], in: directory, tag: "reprocess-\(database)")
            #expect(reprocess.status == 2, "\(database): \(reprocess.stderr)")
            #expect(reprocess.stderr.contains(database))
        }
        #expect(!FileManager.default.fileExists(atPath: directory.file("nothere.sqlite")))
        #expect(FileManager.default.contents(atPath: directory.file("empty.sqlite"))?.isEmpty == true)
    }

    /// An epoch-millisecond --as-of beyond the year 9999 is a typo (a report up to it would build a row per month).
    @Test func anAsOfBeyondTheCalendarIsAUsageError() throws {
        let directory = try TemporaryDirectory()
        try IngestFixtures.write(IngestFixtures.lines(0..<5), to: directory.file("a.ndjson"))
        _ = try Self.run(["ingest", "--db", "l.sqlite", "a.ndjson"], in: directory, tag: "ingest")
        let report = try Self.run(["report", "--db", "l.sqlite", "--as-of", "171717171717171717"], in: directory, tag: "report", within: 20)
        #expect(report.status == 2)
        #expect(report.stderr.contains("--as-of 171717171717171717 lies outside the years 0001 to 9999"))
    }
}

import Foundation
import Ledger
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Runs the real `subledger` binary (built by `swift build`) the way users and cron jobs do.
struct SubledgerProcess {
    /// `<package root>/.build/debug/subledger`, found from this file's path.
    static let binary: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.appendingPathComponent(".build/debug/subledger").path
    }()

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Starts the binary with `arguments`; output goes to files in `directory` so that no pipe can fill up.
    /// `unprivileged` runs it as `nobody` when the tests run as root (root ignores file permissions, so a
    /// read-only folder is read-only only for another user), through util-linux's `setpriv`.
    static func start(_ arguments: [String], in directory: TemporaryDirectory, tag: String,
                      environment: [String: String] = [:], unprivileged: Bool = false) throws -> (ChildProcess, () -> Result) {
        let outPath = directory.file("\(tag).out")
        let errPath = directory.file("\(tag).err")
        let (executable, argv) = unprivileged && getuid() == 0
            ? ("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", binary] + arguments)
            : (binary, arguments)
        let process = try ChildProcess(executable, argv, directory: directory.path,
                                       environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
                                       stdout: outPath, stderr: errPath)
        return (process, {
            // A run that hangs fails its test instead of hanging the suite (and CI) for good.
            let deadline = Date().addingTimeInterval(600)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                Issue.record("subledger \(arguments.joined(separator: " ")) did not finish within 600 s")
            }
            let status = process.waitForExit()
            let read = { (path: String) in String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self) }
            return Result(status: status, stdout: read(outPath), stderr: read(errPath))
        })
    }

    static func run(_ arguments: [String], in directory: TemporaryDirectory, tag: String = "run",
                    unprivileged: Bool = false) throws -> Result {
        let (_, wait) = try start(arguments, in: directory, tag: tag, unprivileged: unprivileged)
        return wait()
    }
}

@Suite(.serialized) struct IngestProcessTests {
    @Test func exitCodesFollowTheCommandLineContract() throws {
        let directory = try TemporaryDirectory()
        try IngestFixtures.write(IngestFixtures.lines(0..<10), to: directory.file("clean.ndjson"))
        try IngestFixtures.write(IngestFixtures.lines(995..<1000), to: directory.file("with-garbage.ndjson"))
        try Data("not a certificate".utf8).write(to: URL(fileURLWithPath: directory.file("root.pem")))

        let clean = try SubledgerProcess.run(["ingest", "--db", "l.sqlite", "--json", "clean.ndjson"], in: directory, tag: "clean")
        #expect(clean.status == 0)
        #expect(clean.stdout.contains(#""records":{"read":21,"used":20,"duplicate":0,"excluded":1,"quarantined":0}"#))

        let quarantined = try SubledgerProcess.run(["ingest", "--db", "l.sqlite", "--json", "with-garbage.ndjson"], in: directory, tag: "garbage")
        #expect(quarantined.status == 1)
        #expect(quarantined.stdout.contains(#""quarantined_by_reason":{"malformed_json":1}"#))
        #expect(quarantined.stderr.contains("malformed_json 1"), "with --json the summary moves to stderr")
        let plain = try SubledgerProcess.run(["ingest", "--db", "plain.sqlite", "with-garbage.ndjson"], in: directory, tag: "plain")
        #expect(plain.status == 1)
        #expect(plain.stdout.contains("malformed_json 1"), "the summary is on stdout (cli.md)")

        let missing = try SubledgerProcess.run(["ingest", "--db", "l.sqlite", "missing.ndjson"], in: directory, tag: "missing")
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("missing.ndjson"))

        let badOption = try SubledgerProcess.run(["ingest", "--db", "l.sqlite", "--no-such-option", "clean.ndjson"], in: directory, tag: "option")
        #expect(badOption.status == 2)

        let badRoot = try SubledgerProcess.run(["ingest", "--db", "l.sqlite", "--apple-root-ca", "root.pem", "clean.ndjson"], in: directory, tag: "root")
        #expect(badRoot.status == 2)
        #expect(badRoot.stderr.contains("root.pem"))

        let noLedger = try SubledgerProcess.run(["status", "--db", "none.sqlite"], in: directory, tag: "nodb")
        #expect(noLedger.status == 2)

        let status = try SubledgerProcess.run(["status", "--db", "l.sqlite", "--json"], in: directory, tag: "status")
        #expect(status.status == 0)
        #expect(status.stdout.contains(#""files":2,"records":{"read":32,"used":30,"duplicate":0,"excluded":1,"quarantined":1}"#))

        let export = try SubledgerProcess.run(["quarantine", "--db", "l.sqlite", "--reason", "malformed_json", "--export", "q.ndjson"],
                                              in: directory, tag: "quarantine")
        #expect(export.status == 0)
        let exported = String(decoding: FileManager.default.contents(atPath: directory.file("q.ndjson")) ?? Data(), as: UTF8.self)
        #expect(exported.hasPrefix(#"{"file":"with-garbage.ndjson","member":null,"position":11,"part":null,"reason":"malformed_json","#))
        #expect(!FileManager.default.fileExists(atPath: directory.file(".q.ndjson.partial")), "written beside, then renamed")
        // A file that is no database: exit 2 (cli.md: "unreadable or foreign database"), and the earlier export
        // is left as it was, not truncated.
        try Data("not a database".utf8).write(to: URL(fileURLWithPath: directory.file("broken.sqlite")))
        let failed = try SubledgerProcess.run(["quarantine", "--db", "broken.sqlite", "--export", "q.ndjson"],
                                              in: directory, tag: "quarantine-broken")
        #expect(failed.status == 2, "\(failed.stderr)")
        #expect(failed.stderr.contains("broken.sqlite: not a subledger ledger"), "\(failed.stderr)")
        #expect(String(decoding: FileManager.default.contents(atPath: directory.file("q.ndjson")) ?? Data(), as: UTF8.self) == exported)
        #expect(!FileManager.default.fileExists(atPath: directory.file(".q.ndjson.partial")))
    }

    /// Kills the real binary with SIGKILL at random moments, re-runs it to completion, and expects exactly
    /// the ledger of an uninterrupted run: nothing lost, nothing doubled.
    @Test func aKilledIngestCompletesOnReRunWithNothingLostOrDoubled() throws {
        let directory = try TemporaryDirectory()
        var inputs: [String] = []
        for part in 0..<4 {
            let name = "part-\(part).ndjson"
            try IngestFixtures.write(IngestFixtures.lines(part * 2000..<(part + 1) * 2000), to: directory.file(name))
            inputs.append(name)
        }
        // One file above the 20 000-record commit interval, so that kills also land between mid-file commits,
        // overlapping the others (duplicates across files).
        try IngestFixtures.write(IngestFixtures.lines(5000..<16000), to: directory.file("large.ndjson"))
        inputs.append("large.ndjson")

        let reference = try SubledgerProcess.run(["ingest", "--db", "reference.sqlite"] + inputs, in: directory, tag: "reference")
        #expect(reference.status == 1)

        var delays: [Int] = []
        for attempt in 0..<5 {
            let delay = Int.random(in: 200...5000)
            delays.append(delay)
            let (process, wait) = try SubledgerProcess.start(["ingest", "--db", "killed.sqlite"] + inputs, in: directory, tag: "kill-\(attempt)")
            usleep(useconds_t(delay * 1000))
            kill(process.processIdentifier, SIGKILL)
            _ = wait()
        }
        let completion = try SubledgerProcess.run(["ingest", "--db", "killed.sqlite"] + inputs, in: directory, tag: "complete")
        #expect(completion.status == 0 || completion.status == 1, "delays \(delays): \(completion.stderr)")

        let expected = try SQLiteLedger(path: directory.file("reference.sqlite"), access: .readOnly)
        let recovered = try SQLiteLedger(path: directory.file("killed.sqlite"), access: .readOnly)
        #expect(try recovered.contentDigest() == expected.contentDigest(), "kill delays (ms): \(delays)")
        let statistics = try recovered.statistics()
        #expect(statistics.used == 32_000, "kill delays (ms): \(delays)")
        // One garbage line per 1,000 numbers: 2 in each part, 11 in the large file. The lines are byte-identical
        // but each is a bad record of its own (key: file, member, position, bytes), kept once whatever the kills.
        #expect(statistics.quarantined == 4 * 2 + 11)
        #expect(try recovered.files().allSatisfy { $0.state == .done })
        #expect(statistics.read == statistics.used + statistics.duplicate + statistics.excluded + statistics.quarantined)
    }

    /// Two ingests on one database at once: the second waits for the first (or, past its bound, exits 3 with
    /// the message); either way the database ends consistent and complete.
    @Test func twoConcurrentIngestsOnOneDatabaseDoNotCorruptIt() throws {
        let directory = try TemporaryDirectory()
        try IngestFixtures.write(IngestFixtures.lines(0..<3000), to: directory.file("a.ndjson"))
        try IngestFixtures.write(IngestFixtures.lines(2000..<5000), to: directory.file("b.ndjson"))
        let (_, waitFirst) = try SubledgerProcess.start(["ingest", "--db", "shared.sqlite", "a.ndjson", "b.ndjson"], in: directory, tag: "first")
        let (_, waitSecond) = try SubledgerProcess.start(["ingest", "--db", "shared.sqlite", "b.ndjson", "a.ndjson"], in: directory, tag: "second")
        let first = waitFirst()
        let second = waitSecond()
        for result in [first, second] {
            let finished = result.status == 0 || result.status == 1
            // Refused past the lock's bound, or (on a loaded machine) by SQLite's own lock while the other process
            // opens or closes the same new file: exit 3 either way, saying to run again, nothing half-written.
            let refused = result.status == 3 && (result.stderr.contains("another ingest is running on shared.sqlite; wait for it or use another --db")
                || result.stderr.contains("shared.sqlite: the ledger is locked by another process; run the command again once it is done"))
            #expect(finished || refused, "exit \(result.status): \(result.stderr)")
        }
        #expect(first.status != 3 || second.status != 3)

        let reference = try SubledgerProcess.run(["ingest", "--db", "reference.sqlite", "a.ndjson", "b.ndjson"], in: directory, tag: "reference")
        #expect(reference.status == 1)
        let shared = try SQLiteLedger(path: directory.file("shared.sqlite"), access: .readOnly)
        #expect(try shared.contentDigest() == SQLiteLedger(path: directory.file("reference.sqlite"), access: .readOnly).contentDigest())
        let statistics = try shared.statistics()
        #expect(statistics.used == 10_000)
        #expect(statistics.read == 10_000 + statistics.duplicate + statistics.excluded + statistics.quarantined)
    }
}

import Foundation
@testable import Ledger
import Simulator
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The ledger on a real PostgreSQL server (a throwaway one on loopback, ``PostgresTestServer``), through the real
/// binary: the same inputs give what SQLite gives, several ingests share one ledger, a server that goes away is
/// survived.
@Suite(.serialized, .enabled(if: PostgresTestServer.isAvailable, "PostgreSQL server binaries (postgresql-15) are not installed"))
struct PostgresLedgerTests {
    static let reportFiles = ReprocessProcessTests.reportFiles

    static func server() throws -> PostgresTestServer {
        try #require(PostgresTestServer.shared, "the throwaway PostgreSQL server did not start")
    }

    static func digest(_ location: String) throws -> String {
        try LedgerLocation(location).open(.readOnly).contentDigest()
    }

    /// The same simulated archives into SQLite and into PostgreSQL: the same ledger content and byte-identical
    /// reports (CSV and JSON); `status`, `quarantine` and `reprocess` work on PostgreSQL too.
    @Test func theSameArchivesGiveTheSameLedgerAndReportsInBothEngines() throws {
        let workspace = try TemporaryDirectory()
        try Simulation(subscribers: 60, months: 8, seed: 41).write(to: workspace.file("sim"))
        let postgres = try Self.server().database("engines")
        for database in ["l.sqlite", postgres] {
            let ingest = try SubledgerProcess.run(["ingest", "--db", database, "--apple-root-ca", "sim/apple-root.der",
                                                   "sim/archives"], in: workspace, tag: "ingest")
            #expect(ingest.status == 1, "the simulated noise is quarantined: \(ingest.stderr)")
        }
        #expect(try Self.digest(postgres) == Self.digest(workspace.file("l.sqlite")))
        for (database, folder) in [("l.sqlite", "sqlite"), (postgres, "postgres")] {
            let report = try SubledgerProcess.run(["report", "--db", database, "--out", folder, "--prices", "sim/prices.csv",
                                                   "--timezone", "Asia/Tokyo"], in: workspace, tag: "report-\(folder)")
            #expect(report.status == 0, "\(report.stderr)")
        }
        ReprocessProcessTests.expectSameReports("sqlite", "postgres", in: workspace)
        // Sliced on PostgreSQL (as report machines would), merged: the same reports again.
        for k in 1...3 {
            let slice = try SubledgerProcess.run(["report", "--db", postgres, "--shard", "\(k)/3", "--partial", "part-\(k)",
                                                  "--prices", "sim/prices.csv", "--timezone", "Asia/Tokyo"],
                                                 in: workspace, tag: "shard-\(k)")
            #expect(slice.status == 0, "\(slice.stderr)")
        }
        let merged = try SubledgerProcess.run(["report", "--merge", "part-3", "part-1", "part-2", "--out", "merged",
                                               "--prices", "sim/prices.csv", "--timezone", "Asia/Tokyo"],
                                              in: workspace, tag: "merge")
        #expect(merged.status == 0, "\(merged.stderr)")
        ReprocessProcessTests.expectSameReports("sqlite", "merged", in: workspace)

        let status = try SubledgerProcess.run(["status", "--db", postgres, "--json"], in: workspace, tag: "status")
        let sqliteStatus = try SubledgerProcess.run(["status", "--db", "l.sqlite", "--json"], in: workspace, tag: "status-sqlite")
        #expect(status.status == 0 && status.stdout == sqliteStatus.stdout, "\(status.stdout) \(status.stderr)")
        let quarantine = try SubledgerProcess.run(["quarantine", "--db", postgres], in: workspace, tag: "quarantine")
        let sqliteQuarantine = try SubledgerProcess.run(["quarantine", "--db", "l.sqlite"], in: workspace, tag: "quarantine-sqlite")
        #expect(!quarantine.stdout.isEmpty && quarantine.stdout == sqliteQuarantine.stdout)
        let reprocess = try SubledgerProcess.run(["reprocess", "--db", postgres, "--apple-root-ca", "sim/apple-root.der"],
                                                 in: workspace, tag: "reprocess")
        #expect(reprocess.status == 1, "the forged notifications stay quarantined: \(reprocess.stderr)")
        #expect(try Self.digest(postgres) == Self.digest(workspace.file("l.sqlite")))
    }

    /// The queries of an ingest's own counts hold whatever plan the server picks. On a large ledger PostgreSQL
    /// joins by hashing and evaluates a join key on rows a range would have left out; `substr` with a negative
    /// length is an error there (SQLite allows it), and the 20,000-subscriber bench's ingest ended in exit 3
    /// ("negative substring length not allowed") after writing everything. Here the planner is told to prefer
    /// such plans on a small ledger: the run's counts and warnings are SQLite's.
    @Test func anIngestsCountsHoldWhenThePlannerHashesAsOnALargeLedger() throws {
        let workspace = try TemporaryDirectory()
        try Simulation(subscribers: 40, months: 6, seed: 7).write(to: workspace.file("sim"))
        let postgres = try Self.server().database("hashing", settings: [
            ("enable_nestloop", "off"), ("enable_indexscan", "off"), ("enable_bitmapscan", "off"),
            ("enable_indexonlyscan", "off"), ("enable_mergejoin", "off"),
        ])
        // Two Pub/Sub messages with one messageId and different data: an id conflict to count.
        let messages = ["tok-conflict-a", "tok-conflict-b"].map { token in
            let data = Data(#"{"version":"1.0","packageName":"com.example.subledger","eventTimeMillis":"1740967620000","subscriptionNotification":{"version":"1.0","notificationType":7,"purchaseToken":"\#(token)","subscriptionId":"premium_monthly"}}"#.utf8)
            return #"{"message":{"data":"\#(data.base64EncodedString())","messageId":"9900000000000001","publishTime":"2025-03-03T02:07:01.948Z"},"subscription":"projects/p/subscriptions/s"}"#
        }
        try (messages.joined(separator: "\n") + "\n").write(toFile: workspace.file("conflict.ndjson"), atomically: true, encoding: .utf8)
        var outputs: [String] = []
        for database in ["l.sqlite", postgres] {
            let ingest = try SubledgerProcess.run(["ingest", "--json", "--db", database, "--apple-root-ca", "sim/apple-root.der",
                                                   "sim/archives", "conflict.ndjson"], in: workspace, tag: "ingest")
            #expect(ingest.status == 1, "the simulated noise is quarantined: \(ingest.stderr)")
            outputs.append(ingest.stdout)
        }
        let counts = try outputs.map { output in
            let summary = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
            let kept = summary.filter { ["records", "excluded_by_reason", "warnings"].contains($0.key) }
            return String(decoding: try JSONSerialization.data(withJSONObject: kept, options: .sortedKeys), as: UTF8.self)
        }
        #expect(counts[0] == counts[1])
        #expect(counts[0].contains("\"message_id_conflicts\":1,") && counts[0].contains("\"test\":"), "\(counts[0])")
        #expect(try Self.digest(postgres) == Self.digest(workspace.file("l.sqlite")))
    }

    /// An ingest counts its own records by its `run` id, which the server's statistics cannot hold while the
    /// ingest runs (the id is new), so the planner expects one record. Joined to the set of test subjects, that
    /// plan scanned the whole set again for every record: two bench ingests sharing a ledger stalled 60 to 150 s
    /// after their last write. The count of a new run on an analysed ledger probes the test subjects by each
    /// record's subject instead (one index lookup per record), and cursors are planned for all their rows.
    @Test func anIngestsOwnCountsProbeTheTestSubjectsWhenTheServerExpectsOneRecord() throws {
        let workspace = try TemporaryDirectory()
        try Simulation(subscribers: 60, months: 8, seed: 44).write(to: workspace.file("sim"))
        let postgres = try Self.server().database("probes")
        let ingest = try SubledgerProcess.run(["ingest", "--db", postgres, "--apple-root-ca", "sim/apple-root.der",
                                               "sim/archives"], in: workspace, tag: "ingest")
        #expect(ingest.status == 1, "the simulated noise is quarantined: \(ingest.stderr)")
        let ledger = try PostgresLedger(try #require(PostgresLocation(postgres, environment: [:])), access: .readOnly)
        #expect(try ledger.session.query("SHOW cursor_tuple_fraction").first?.text(0) == "1")
        try ledger.session.query("ANALYZE records")
        let plan = try ledger.session.query("EXPLAIN " + LedgerSchema.runOutcomes, [.text(UUID().uuidString.lowercased())])
            .map { row throws(LedgerError) in try row.text(0) ?? "" }
        let text = plan.joined(separator: "\n")
        let scans = plan.indices.filter { plan[$0].contains("records_test_subjects") }
        #expect(!scans.isEmpty, "\(text)")
        for scan in scans {
            let condition = plan[(scan + 1)...].first { $0.contains("Index Cond") } ?? ""
            #expect(condition.contains("subject = r.subject"), "the test subjects are scanned, not probed:\n\(text)")
        }
    }

    /// A cursor asks for its next page before it hands the current one on (``PostgresSession/send(_:)``). A read
    /// that stops at its first row inside a transaction of the caller's (the body throws) leaves the transaction
    /// usable and the next read whole, 25 times over: the session sends the cursor's `CLOSE` only once that page
    /// came, since a statement's task may start before an earlier one's, and a late `FETCH` would abort the
    /// transaction or take the first rows of the next read's cursor. (Tasks started this close together ran in
    /// order in every run here, so the test guards the behaviour more than it catches the race.)
    @Test func aReadThatStopsEarlyLeavesTheTransactionAndTheNextReadWhole() throws {
        let location = try #require(PostgresLocation(try Self.server().database("fetch_ahead"), environment: [:]))
        let ledger = try PostgresLedger(location, access: .readWrite)
        let rows = "SELECT n FROM generate_series(1, 10000) AS n"
        try ledger.beginTransaction()
        for _ in 0..<25 {
            var seen = 0
            #expect(throws: LedgerError.self) {
                try ledger.eachRow(rows, []) { _ throws(LedgerError) in
                    seen += 1
                    if seen == 1 { throw LedgerError(kind: .corrupt, path: "", message: "stop") }
                }
            }
            var numbers: [Int64] = []
            try ledger.eachRow(rows, []) { row throws(LedgerError) in numbers.append(try row.requiredInteger(0)) }
            #expect(numbers == Array(1...10_000))
        }
        try ledger.commitTransaction()
    }

    /// A log's cut last line, quarantined, leaves the quarantine once the line is complete, on PostgreSQL too.
    @Test func aCutLastLineCompletedSinceLeavesTheQuarantine() throws {
        let server = try Self.server()
        try IngestJobTests.completeACutLastLine(in: try TemporaryDirectory(),
                                                ledger: LedgerLocation(try server.database("cut_line")),
                                                fresh: LedgerLocation(try server.database("cut_line_fresh")))
    }

    /// A file whose row another process's store holds (the store updates the row of the file it writes until
    /// its transaction commits, a whole batch later) is passed over at once: claimed elsewhere while that
    /// process's claim lasts, unchanged once done. A claim that waited for the row instead gave up after 5 s and
    /// read the file a second time, and a process behind another's every file read nothing of its own.
    @Test func aClaimPassesOverAFileAnotherProcessIsWritingWithoutWaiting() throws {
        let location = try #require(PostgresLocation(try Self.server().database("claims"), environment: [:]))
        let lock = try PostgresLedger(location, access: .readWrite).lockForWriting(.shared, timeout: .seconds(10))
        defer { lock.release() }
        let writing = FileFingerprint(path: "archives/2025-01-01.ndjson.gz", size: 10, sha256: String(repeating: "a", count: 64))
        let written = FileFingerprint(path: "archives/2025-01-02.ndjson.gz", size: 20, sha256: String(repeating: "b", count: 64))
        let first = try PostgresFileClaimer(location: location)
        let second = try PostgresFileClaimer(location: location)
        #expect(first.claim(writing) == .read && first.claim(written) == .read)
        let store = try PostgresSession(location)
        try store.query("UPDATE files SET state = 'done', lease_owner = NULL, lease_until = NULL WHERE path = ?",
                        [.text(written.path)])
        try store.query("BEGIN")
        for file in [writing, written] {
            try store.query(LedgerSchema.fileProgress, [.integer(5), .integer(5), .text(file.path)])
        }
        let clock = ContinuousClock()
        var claims: [FileClaim] = []
        let waited = clock.measure { claims = [second.claim(writing), second.claim(written)] }
        try store.query("ROLLBACK")
        #expect(claims == [.claimedElsewhere, .unchanged])
        #expect(waited < .seconds(2), "the claims waited \(waited) for the other process's transaction")
    }

    /// Three ingests over the same inputs at once, one killed with SIGKILL mid-way: the others take its files
    /// over once its claims expire, and the ledger ends as one ingest alone leaves it.
    @Test func threeConcurrentIngestsOneKilledGiveTheLedgerOfOne() throws {
        let workspace = try TemporaryDirectory()
        try Simulation(subscribers: 200, months: 10, seed: 42).write(to: workspace.file("sim"))
        let server = try Self.server()
        let alone = try server.database("alone")
        let shared = try server.database("shared")
        _ = try SubledgerProcess.run(["ingest", "--db", alone, "--apple-root-ca", "sim/apple-root.der", "sim/archives"],
                                     in: workspace, tag: "alone")
        let arguments = ["ingest", "--db", shared, "--apple-root-ca", "sim/apple-root.der", "sim/archives"]
        let environment = ["SUBLEDGER_LEASE_SECONDS": "2"]
        let workers = try (0..<3).map { index in
            try SubledgerProcess.start(arguments, in: workspace, tag: "worker-\(index)", environment: environment)
        }
        usleep(useconds_t(Int.random(in: 300...1500) * 1000))
        kill(workers[0].0.processIdentifier, SIGKILL)
        let results = workers.map { $0.1() }
        for result in results.dropFirst() {
            #expect(result.status == 0 || result.status == 1, "\(result.stderr)")
        }
        #expect(try Self.digest(shared) == Self.digest(alone))
        let ledger = try LedgerLocation(shared).open(.readOnly)
        #expect(try ledger.files().filter { $0.fingerprint.path.hasPrefix("sim/archives") }.allSatisfy { $0.state == .done })
        let statistics = try ledger.statistics()
        #expect(statistics.read == statistics.used + statistics.duplicate + statistics.excluded + statistics.quarantined)
        #expect(try statistics.used == LedgerLocation(alone).open(.readOnly).statistics().used)
    }

    /// The server stopped in the middle of an ingest: the ingest exits 3 saying so; once the server is back, a
    /// re-run completes the ledger with nothing lost or doubled.
    @Test func aServerStoppedMidIngestExitsThreeAndAReRunCompletes() throws {
        let workspace = try TemporaryDirectory()
        try Simulation(subscribers: 300, months: 12, seed: 43).write(to: workspace.file("sim"))
        let server = try PostgresTestServer()
        defer { server.stop() }
        let reference = try Self.server().database("reference")
        let database = try server.database("stopped")
        _ = try SubledgerProcess.run(["ingest", "--db", reference, "--apple-root-ca", "sim/apple-root.der", "sim/archives"],
                                     in: workspace, tag: "reference")
        let arguments = ["ingest", "--db", database, "--apple-root-ca", "sim/apple-root.der", "sim/archives"]
        // Short claims, so that the re-run need not wait long for the claims the interrupted run left.
        let environment = ["SUBLEDGER_LEASE_SECONDS": "2"]
        let (_, wait) = try SubledgerProcess.start(arguments, in: workspace, tag: "interrupted", environment: environment)
        usleep(1_500_000)
        try server.kill()
        let interrupted = wait()
        #expect(interrupted.status == 3, "\(interrupted.stderr)")
        #expect(interrupted.stderr.contains("PostgreSQL"), "\(interrupted.stderr)")
        #expect(!interrupted.stderr.contains("INSERT") && !interrupted.stderr.contains("SELECT"), "no SQL in messages")
        try server.start()
        let (_, rerun) = try SubledgerProcess.start(arguments, in: workspace, tag: "again", environment: environment)
        let again = rerun()
        #expect(again.status == 0 || again.status == 1, "\(again.stderr)")
        #expect(try Self.digest(database) == Self.digest(reference))
    }
}

import Foundation
@testable import Ledger
import Simulator
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `subledger reprocess` as users call it: the ledger is the system of record (inputs.md, "Rebuildable").
@Suite(.serialized)
struct ReprocessProcessTests {
    static let reportFiles = ["subscriptions_monthly.csv", "revenue_monthly.csv", "mrr_movements.csv", "retention_cohorts.csv",
                              "trial_conversion.csv", "grace_recovery.csv", "summary.json", "report.html"]

    /// Expects every report file of `first` and `second` (folders in `workspace`) to be byte-identical.
    static func expectSameReports(_ first: String, _ second: String, in workspace: TemporaryDirectory,
                                  sourceLocation: SourceLocation = #_sourceLocation) {
        for name in reportFiles {
            let a = FileManager.default.contents(atPath: workspace.file("\(first)/\(name)"))
            let b = FileManager.default.contents(atPath: workspace.file("\(second)/\(name)"))
            #expect(a != nil && a == b, "\(name) differs between \(first)/ and \(second)/", sourceLocation: sourceLocation)
        }
    }

    static func report(_ database: String, to folder: String, in workspace: TemporaryDirectory) throws -> SubledgerProcess.Result {
        try SubledgerProcess.run(["report", "--db", database, "--out", folder, "--prices", "sim/prices.csv",
                                  "--as-of", "2024-06-30T23:59:59.999Z"], in: workspace, tag: "report-\(folder)")
    }

    /// (a) With the archives moved away, a reprocess rebuilds the same facts from the ledger alone: the reports
    /// are byte-identical to those of the ingest.
    @Test func reprocessWithoutTheArchivesGivesByteIdenticalReports() throws {
        let workspace = try TemporaryDirectory()
        try Simulation(subscribers: 40, months: 6, seed: 21).write(to: workspace.file("sim"))
        let ingest = try SubledgerProcess.run(["ingest", "--db", "l.sqlite", "--apple-root-ca", "sim/apple-root.der",
                                               "sim/archives"], in: workspace, tag: "ingest")
        #expect(ingest.status == 1, "the simulated noise is quarantined: \(ingest.stderr)")
        #expect(try Self.report("l.sqlite", to: "before", in: workspace).status == 0)
        let digest = try SQLiteLedger(path: workspace.file("l.sqlite"), access: .readOnly).contentDigest()
        try FileManager.default.moveItem(atPath: workspace.file("sim/archives"), toPath: workspace.file("elsewhere"))

        let reprocess = try SubledgerProcess.run(["reprocess", "--db", "l.sqlite", "--json", "--apple-root-ca",
                                                  "sim/apple-root.der"], in: workspace, tag: "reprocess")
        #expect(reprocess.status == 1, "the forged notifications stay quarantined: \(reprocess.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(reprocess.stdout.utf8)) as? [String: Any]
        #expect((object?["reprocessed"] as? Int ?? 0) > 100, "\(reprocess.stdout)")
        #expect(object?["released"] as? Int == 0)
        #expect((object?["unreadable_files"] as? [Any])?.isEmpty == true)
        #expect(try Self.report("l.sqlite", to: "after", in: workspace).status == 0)
        Self.expectSameReports("before", "after", in: workspace)
        #expect(try SQLiteLedger(path: workspace.file("l.sqlite"), access: .readOnly).contentDigest() == digest)
    }

    /// A backend that polls `subscriptions.get` daily logs the same resource with a new `received_at` each day.
    /// Each fetch is its own record (its facts are dated by the fetch), so the ledger keeps every copy and a
    /// reprocess rebuilds exactly the facts the ingest wrote; only a copy logged at the same instant is a
    /// duplicate.
    @Test func aResourceFetchedDailyIsRebuiltFactForFact() throws {
        let workspace = try TemporaryDirectory()
        let body = #"{"kind":"androidpublisher#subscriptionPurchase","startTimeMillis":"1709294400000","expiryTimeMillis":"1711972800000","autoRenewing":true,"paymentState":1,"orderId":"GPA.1-2-3-4","priceAmountMicros":"4990000","priceCurrencyCode":"USD"}"#
        let lines = ["2024-03-01T12:00:00Z", "2024-03-02T12:00:00Z", "2024-03-02T12:00:00.000Z", "2024-03-03T12:00:00Z"].map {
            #"{"received_at":"\#($0)","source":"google.subscription.v1","purchase_token":"tok-A","subscription_id":"premium_monthly","package_name":"com.example.app","body":\#(body)}"#
        }
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: workspace.file("polls.ndjson")))
        let ingest = try SubledgerProcess.run(["ingest", "--db", "l.sqlite", "--json", "polls.ndjson"], in: workspace, tag: "ingest")
        #expect(ingest.status == 0, "\(ingest.stderr)")
        #expect(ingest.stdout.contains(#""read":4,"used":3,"duplicate":1"#), "\(ingest.stdout)")
        let digest = try SQLiteLedger(path: workspace.file("l.sqlite"), access: .readOnly).contentDigest()
        let reprocess = try SubledgerProcess.run(["reprocess", "--db", "l.sqlite"], in: workspace, tag: "reprocess")
        #expect(reprocess.status == 0, "\(reprocess.stderr)")
        #expect(try SQLiteLedger(path: workspace.file("l.sqlite"), access: .readOnly).contentDigest() == digest)
    }

    /// (b) Records quarantined for a wrong root or bundle id are released by `reprocess --quarantined` with the
    /// right option; the reports then equal a clean ingest's.
    @Test func quarantinedRecordsAreReleasedWithTheRightOptions() throws {
        let workspace = try TemporaryDirectory()
        try Simulation(subscribers: 40, months: 6, seed: 22).write(to: workspace.file("sim"))
        _ = try SubledgerProcess.run(["ingest", "--db", "clean.sqlite", "--apple-root-ca", "sim/apple-root.der",
                                      "sim/archives"], in: workspace, tag: "clean")
        #expect(try Self.report("clean.sqlite", to: "clean", in: workspace).status == 0)
        let clean = try SQLiteLedger(path: workspace.file("clean.sqlite"), access: .readOnly).statistics()

        // Without the simulator's root, every signed App Store payload fails verification.
        _ = try SubledgerProcess.run(["ingest", "--db", "l.sqlite", "sim/archives"], in: workspace, tag: "no-root")
        let wrong = try SQLiteLedger(path: workspace.file("l.sqlite"), access: .readOnly).statistics()
        let forged = clean.quarantinedByReason["bad_signature"] ?? 0
        #expect((wrong.quarantinedByReason["bad_signature"] ?? 0) > forged + 10)
        // A wrong bundle id quarantines what the root now lets through.
        let bundle = try SubledgerProcess.run(["reprocess", "--db", "l.sqlite", "--quarantined", "--apple-root-ca",
                                               "sim/apple-root.der", "--bundle-id", "com.example.other"],
                                              in: workspace, tag: "wrong-bundle")
        #expect(bundle.status == 1)
        let wrongBundle = try SQLiteLedger(path: workspace.file("l.sqlite"), access: .readOnly).statistics()
        #expect((wrongBundle.quarantinedByReason["wrong_bundle"] ?? 0) > 10)

        let release = try SubledgerProcess.run(["reprocess", "--db", "l.sqlite", "--quarantined", "--json",
                                                "--apple-root-ca", "sim/apple-root.der"], in: workspace, tag: "release")
        #expect(release.status == 1, "the forged notifications stay quarantined: \(release.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(release.stdout.utf8)) as? [String: Any]
        #expect((object?["released"] as? Int ?? 0) > 10, "\(release.stdout)")
        let released = try SQLiteLedger(path: workspace.file("l.sqlite"), access: .readOnly).statistics()
        #expect(released == clean)
        #expect(try Self.report("l.sqlite", to: "released", in: workspace).status == 0)
        Self.expectSameReports("clean", "released", in: workspace)
    }

    /// (d) Facts made by older rules: `report` refuses (exit 2, saying what to run), `run` reprocesses them first.
    @Test func aStaleLedgerMakesReportExitTwoAndRunReprocess() throws {
        let workspace = try TemporaryDirectory()
        try Simulation(subscribers: 20, months: 6, seed: 23).write(to: workspace.file("sim"))
        _ = try SubledgerProcess.run(["ingest", "--db", "l.sqlite", "--apple-root-ca", "sim/apple-root.der",
                                      "sim/archives"], in: workspace, tag: "ingest")
        #expect(try Self.report("l.sqlite", to: "before", in: workspace).status == 0)
        do {
            // What an upgrade whose rules changed looks like from the ledger's side.
            let ledger = try SQLiteLedger(path: workspace.file("l.sqlite"))
            let lock = try ledger.lockForWriting(.exclusive, timeout: .seconds(5))
            try ledger.beginTransaction()
            try ledger.setRulesVersion(1)
            try ledger.commitTransaction()
            lock.release()
        }
        let refused = try Self.report("l.sqlite", to: "refused", in: workspace)
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("run `subledger reprocess --db l.sqlite`"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: workspace.file("refused/summary.json")))

        let run = try SubledgerProcess.run(["run", "--db", "l.sqlite", "--out", "run", "--prices", "sim/prices.csv",
                                            "--as-of", "2024-06-30T23:59:59.999Z", "--apple-root-ca", "sim/apple-root.der",
                                            "sim/archives"], in: workspace, tag: "run")
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains("reprocessing them first"), "\(run.stderr)")
        #expect(run.stdout.contains("reprocess (full): "), "\(run.stdout)")
        Self.expectSameReports("before", "run", in: workspace)
    }

    /// Writes `simulation` to sim/ in `workspace` and ingests it into l.sqlite; the ledger's content digest.
    static func ingestSimulation(_ simulation: Simulation, in workspace: TemporaryDirectory) throws -> String {
        try simulation.write(to: workspace.file("sim"))
        _ = try SubledgerProcess.run(["ingest", "--db", "l.sqlite", "--apple-root-ca", "sim/apple-root.der",
                                      "sim/archives"], in: workspace, tag: "ingest")
        return try SQLiteLedger(path: workspace.file("l.sqlite"), access: .readOnly).contentDigest()
    }

    /// Killed with SIGKILL at random moments, a re-run finishes the reprocess: the ledger is the one an
    /// uninterrupted reprocess leaves.
    @Test func aKilledReprocessFinishesOnReRun() throws {
        let workspace = try TemporaryDirectory()
        let digest = try Self.ingestSimulation(Simulation(subscribers: 300, months: 12, seed: 24), in: workspace)
        var delays: [Int] = []
        for attempt in 0..<4 {
            let delay = Int.random(in: 100...2500)
            delays.append(delay)
            let (process, wait) = try SubledgerProcess.start(["reprocess", "--db", "l.sqlite", "--apple-root-ca",
                                                              "sim/apple-root.der"], in: workspace, tag: "kill-\(attempt)")
            usleep(useconds_t(delay * 1000))
            kill(process.processIdentifier, SIGKILL)
            _ = wait()
        }
        let refused = try Self.report("l.sqlite", to: "refused", in: workspace)
        #expect(refused.status == 2 || refused.status == 0, "a killed reprocess leaves a ledger that says so: \(refused.stderr)")
        let completion = try SubledgerProcess.run(["reprocess", "--db", "l.sqlite", "--apple-root-ca", "sim/apple-root.der"],
                                                  in: workspace, tag: "complete")
        #expect(completion.status == 1, "delays \(delays): \(completion.stderr)")
        #expect(try SQLiteLedger(path: workspace.file("l.sqlite"), access: .readOnly).contentDigest() == digest,
                "kill delays (ms): \(delays)")
    }

    /// A reprocess that a release before `011-sqlite-queue-of-rowids` left unfinished, its queue written by that
    /// release's statements (records by key, one of them stashed with its payload and its old row gone, the
    /// quarantined records moved in, the facts deleted), finishes after the upgrade: the step moves the queued
    /// keys to the rowid list, and the ledger ends as the ingest left it.
    @Test func aReprocessQueuedByTheReleaseBeforeRowidListsFinishes() throws {
        let workspace = try TemporaryDirectory()
        let digest = try Self.ingestSimulation(Simulation(subscribers: 40, months: 6, seed: 27), in: workspace)
        let stashed = "(SELECT dedup_key FROM records ORDER BY rowid LIMIT 1 OFFSET 5)"
        do {
            let older = try SQLiteConnection(path: workspace.file("l.sqlite"), mode: .readWrite)
            for sql in ["BEGIN IMMEDIATE", "DROP TABLE reprocess_records", "DROP TABLE reprocess_stash",
                        "DELETE FROM migrations WHERE name = '011-sqlite-queue-of-rowids'",
                        LedgerSchema.queueQuarantine, LedgerSchema.deleteQueuedQuarantine, LedgerSchema.queueRecords,
                        LedgerSchema.deleteFacts, LedgerSchema.deleteParts,
                        """
                        UPDATE reprocess_queue SET payload = (SELECT payload FROM records WHERE dedup_key = key),
                            dictionary = (SELECT dictionary FROM records WHERE dedup_key = key)
                        WHERE origin = 'record' AND key = \(stashed)
                        """,
                        "DELETE FROM records WHERE dedup_key = \(stashed)",
                        "INSERT OR REPLACE INTO ledger_meta (key, value) VALUES ('reprocess', 'full')",
                        "DELETE FROM ledger_meta WHERE key = 'rules_version'", "COMMIT"] {
                try older.execute(sql)
            }
            #expect(try older.strings("SELECT origin || ':' || (payload IS NULL) FROM reprocess_queue GROUP BY 1 ORDER BY 1")
                    == ["quarantine:0", "record:0", "record:1"])
        }

        let reprocess = try SubledgerProcess.run(["reprocess", "--db", "l.sqlite", "--apple-root-ca", "sim/apple-root.der"],
                                                 in: workspace, tag: "reprocess")
        #expect(reprocess.status == 1, "the forged notifications stay quarantined: \(reprocess.stderr)")
        let ledger = try SQLiteLedger(path: workspace.file("l.sqlite"), access: .readOnly)
        #expect(try ledger.contentDigest() == digest)
        #expect(try ledger.sqlite.strings("""
            SELECT (SELECT COUNT(*) FROM reprocess_queue) + (SELECT COUNT(*) FROM reprocess_records)
                + (SELECT COUNT(*) FROM reprocess_stash)
            """) == ["0"])
        #expect(try ledger.sqlite.strings("SELECT name FROM migrations WHERE name LIKE '011-%'") == ["011-sqlite-queue-of-rowids"])
    }

    /// A copy of the schema-3 ledger of the previous release and its archives (Fixtures/schema3) in `workspace`.
    static func copySchema3Fixture(to workspace: TemporaryDirectory) throws {
        var fixture = URL(fileURLWithPath: #filePath)
        fixture.deleteLastPathComponent()
        fixture.appendPathComponent("Fixtures/schema3")
        for name in ["ledger.sqlite", "sim"] {
            try FileManager.default.copyItem(atPath: fixture.appendingPathComponent(name).path, toPath: workspace.file(name))
        }
    }

    /// (c) A ledger of the previous release (schema 3, no payloads) is refused by `report` until it is upgraded;
    /// `reprocess` migrates it and reads its archives again from the recorded paths; the reports then equal a
    /// fresh ingest's of the same archives.
    @Test func aSchema3LedgerMigratesAndReprocessesFromItsArchives() throws {
        let workspace = try TemporaryDirectory()
        try Self.copySchema3Fixture(to: workspace)
        let refused = try Self.report("ledger.sqlite", to: "refused", in: workspace)
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("run `subledger reprocess --db ledger.sqlite`"), "\(refused.stderr)")

        let reprocess = try SubledgerProcess.run(["reprocess", "--db", "ledger.sqlite", "--apple-root-ca", "sim/apple-root.der"],
                                                 in: workspace, tag: "reprocess")
        #expect(reprocess.status == 1, "the simulated noise is quarantined again: \(reprocess.stderr)")
        #expect(reprocess.stdout.contains("archives read again"), "\(reprocess.stdout)")
        #expect(try Self.report("ledger.sqlite", to: "upgraded", in: workspace).status == 0)

        _ = try SubledgerProcess.run(["ingest", "--db", "fresh.sqlite", "--apple-root-ca", "sim/apple-root.der",
                                      "sim/archives"], in: workspace, tag: "fresh")
        #expect(try Self.report("fresh.sqlite", to: "fresh", in: workspace).status == 0)
        Self.expectSameReports("fresh", "upgraded", in: workspace)
        let upgraded = try SQLiteLedger(path: workspace.file("ledger.sqlite"), access: .readOnly)
        #expect(try upgraded.contentDigest() == SQLiteLedger(path: workspace.file("fresh.sqlite"), access: .readOnly).contentDigest())
    }

    /// An archive of a schema-3 ledger that is gone cannot be read again: `reprocess` names it (exit 1) and
    /// `status` keeps it as a file to ingest again; ingesting it then completes the ledger.
    @Test func aMissingArchiveOfASchema3LedgerIsNamed() throws {
        let workspace = try TemporaryDirectory()
        try Self.copySchema3Fixture(to: workspace)
        let gone = "sim/archives/google-play/2024-02.zip"
        try FileManager.default.moveItem(atPath: workspace.file(gone), toPath: workspace.file("2024-02.zip"))
        let reprocess = try SubledgerProcess.run(["reprocess", "--db", "ledger.sqlite", "--apple-root-ca", "sim/apple-root.der"],
                                                 in: workspace, tag: "reprocess")
        #expect(reprocess.status == 1)
        #expect(reprocess.stdout.contains("\(gone): not found at reprocess: ingest it again"), "\(reprocess.stdout)")
        let status = try SubledgerProcess.run(["status", "--db", "ledger.sqlite"], in: workspace, tag: "status")
        #expect(status.stdout.contains("\(gone): reading"), "\(status.stdout)")
        try FileManager.default.moveItem(atPath: workspace.file("2024-02.zip"), toPath: workspace.file(gone))
        _ = try SubledgerProcess.run(["ingest", "--db", "ledger.sqlite", "--apple-root-ca", "sim/apple-root.der",
                                      "sim/archives"], in: workspace, tag: "complete")
        _ = try SubledgerProcess.run(["ingest", "--db", "fresh.sqlite", "--apple-root-ca", "sim/apple-root.der",
                                      "sim/archives"], in: workspace, tag: "fresh")
        #expect(try SQLiteLedger(path: workspace.file("ledger.sqlite"), access: .readOnly).contentDigest()
                == SQLiteLedger(path: workspace.file("fresh.sqlite"), access: .readOnly).contentDigest())
    }
}

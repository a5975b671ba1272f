import Foundation
import Simulator
import Testing

/// `subledger report` and `run` as users call them: exit codes of cli.md, every file written, and the same
/// ledger and options giving byte-identical files.
@Suite(.serialized)
struct ReportProcessTests {
    @Test func usageErrorsExitTwoWithAMessageThatSaysWhatToDo() throws {
        let workspace = try TemporaryDirectory()
        try Data("platform,product_id,currency,price,duration\napple,weekly,USD,not-a-price,P1W\n".utf8)
            .write(to: URL(fileURLWithPath: workspace.file("bad-prices.csv")))
        let cases: [(arguments: [String], message: String)] = [
            (["report", "--db", "missing.sqlite"], "no ledger database"),
            (["report", "--timezone", "Mars/Base"], "unknown time zone 'Mars/Base'"),
            // Foundation reads `GMT+5` as 5 hours east; IANA's Etc/GMT+5 is 5 hours west: neither is guessed.
            (["report", "--timezone", "GMT+5"], "unknown time zone 'GMT+5'"),
            (["report", "--timezone", "UTC-3"], "unknown time zone 'UTC-3'"),
            (["report", "--format", "pdf"], "--format 'pdf' is not one of csv, json, html"),
            (["report", "--currency", "USD"], "--currency needs --fx-rates"),
            (["report", "--as-of", "yesterday"], "--as-of 'yesterday' is not an RFC 3339 time"),
            (["run", "--db", "l.sqlite", "no-such-folder"], "no-such-folder"),
        ]
        for (arguments, message) in cases {
            let result = try SubledgerProcess.run(arguments, in: workspace, tag: "usage")
            #expect(result.status == 2, "\(arguments): exit \(result.status), \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
        let simulation = workspace.file("sim")
        try Simulation(subscribers: 20, months: 3, seed: 5).write(to: simulation)
        _ = try SubledgerProcess.run(["ingest", "--db", "l.sqlite", "--apple-root-ca", "sim/apple-root.der", "sim/archives"],
                                     in: workspace, tag: "ingest")
        // A zero offset reads the same either way: `GMT-0` is an IANA name too.
        let zero = try SubledgerProcess.run(["report", "--db", "l.sqlite", "--out", "zero", "--timezone", "GMT-0"], in: workspace, tag: "zero")
        #expect(zero.status == 0, "\(zero.stderr)")
        let badPrices = try SubledgerProcess.run(["report", "--db", "l.sqlite", "--prices", "bad-prices.csv"], in: workspace, tag: "prices")
        #expect(badPrices.status == 2)
        #expect(badPrices.stderr.contains("line 2"), "\(badPrices.stderr)")
    }

    @Test func runWritesEveryFileAndTheSameLedgerGivesTheSameBytes() throws {
        let workspace = try TemporaryDirectory()
        try Simulation(subscribers: 40, months: 6, seed: 9).write(to: workspace.file("sim"))
        let run = try SubledgerProcess.run(["run", "--db", "l.sqlite", "--out", "first", "--prices", "sim/prices.csv",
                                            "--apple-root-ca", "sim/apple-root.der", "sim/archives"], in: workspace, tag: "run")
        #expect(run.status == 1, "the simulated noise is quarantined: \(run.stderr)")
        #expect(run.stdout.contains("reports written to first/"))
        #expect(run.stdout.contains("records: "), "the ingest summary is a summary: stdout (cli.md)")
        #expect(run.stdout.contains("  trial conversion, trials started this month: "))
        #expect(run.stdout.contains("  billing-issue recovery rate, episodes started this month: "))
        // The headline's rates are the CSV's own cells (metrics.md defines them per platform and product only).
        let month = try #require(run.stdout.split(separator: "last complete month ").last?.prefix(7)).description
        let trials = try String(contentsOfFile: workspace.file("first/trial_conversion.csv"), encoding: .utf8)
            .split(separator: "\n").dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false) }
            .filter { $0[0] == month }
        for row in trials {
            #expect(run.stdout.contains("\(row[1]) \(row[2]) \(row[7].isEmpty ? "n/a" : String(row[7])) (\(row[4]) of "),
                    "trial row \(row) in the summary: \(run.stdout)")
        }
        let json = try SubledgerProcess.run(["run", "--json", "--db", "l.sqlite", "--out", "third", "--prices", "sim/prices.csv",
                                             "sim/archives"], in: workspace, tag: "run-json")
        #expect(json.status == 0, "every file is unchanged, so nothing new is quarantined: \(json.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect((object?["records"] as? [String: Any])?["read"] as? Int == 0, "stdout is the one ingest JSON object")
        #expect(json.stderr.contains("reports written to third/"))
        let again = try SubledgerProcess.run(["report", "--db", "l.sqlite", "--out", "second", "--prices", "sim/prices.csv"],
                                             in: workspace, tag: "report")
        #expect(again.status == 0, "\(again.stderr)")
        let names = ["subscriptions_monthly.csv", "revenue_monthly.csv", "retention_cohorts.csv", "trial_conversion.csv",
                     "grace_recovery.csv", "summary.json", "report.html"]
        for name in names {
            let first = FileManager.default.contents(atPath: workspace.file("first/\(name)"))
            let second = FileManager.default.contents(atPath: workspace.file("second/\(name)"))
            #expect(first != nil && first == second, "\(name) differs between two reports of one ledger")
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: workspace.file("first")).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty, "temporary files left behind: \(leftovers)")
    }
}

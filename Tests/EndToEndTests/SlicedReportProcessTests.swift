import AppStore
import Foundation
import Ledger
import PlayStore
import Pipeline
import Simulator
import SubscriptionMetrics
import Testing

/// Sliced reports (cli.md `--shard K/N --partial FILE`, `--merge FILE...`; ledger.md "Scaling out"): every split
/// of the buckets merges into the unsliced report, byte for byte, and a merge refuses what does not belong
/// together.
@Suite(.serialized)
struct SlicedReportProcessTests {
    static func prepare() throws -> TemporaryDirectory {
        let workspace = try TemporaryDirectory()
        try Simulation(subscribers: 120, months: 10, seed: 51).write(to: workspace.file("sim"))
        _ = try SubledgerProcess.run(["ingest", "--db", "l.sqlite", "--apple-root-ca", "sim/apple-root.der", "sim/archives"],
                                     in: workspace, tag: "ingest")
        return workspace
    }

    static let options = ["--prices", "sim/prices.csv", "--timezone", "Asia/Tokyo"]

    @Test func everySplitIntoShardsMergesIntoTheUnslicedReport() throws {
        let workspace = try Self.prepare()
        let whole = try SubledgerProcess.run(["report", "--db", "l.sqlite", "--slices", "1", "--out", "whole"] + Self.options,
                                             in: workspace, tag: "whole")
        #expect(whole.status == 0, "\(whole.stderr)")
        let threads = try SubledgerProcess.run(["report", "--db", "l.sqlite", "--slices", "4", "--out", "threads"] + Self.options,
                                               in: workspace, tag: "threads")
        #expect(threads.status == 0, "\(threads.stderr)")
        ReprocessProcessTests.expectSameReports("whole", "threads", in: workspace)
        for n in [1, 2, 3, 7] {
            var partials: [String] = []
            for k in (1...n).shuffled() {
                let partial = "part-\(n)-\(k)"
                let slice = try SubledgerProcess.run(["report", "--db", "l.sqlite", "--shard", "\(k)/\(n)", "--partial", partial]
                                                     + Self.options, in: workspace, tag: "shard-\(n)-\(k)")
                #expect(slice.status == 0, "\(slice.stderr)")
                partials.append(partial)
            }
            let merged = try SubledgerProcess.run(["report", "--merge"] + partials.shuffled() + ["--out", "merged-\(n)"] + Self.options,
                                                  in: workspace, tag: "merge-\(n)")
            #expect(merged.status == 0, "\(merged.stderr)")
            ReprocessProcessTests.expectSameReports("whole", "merged-\(n)", in: workspace)
        }
    }

    /// Random bucket ranges (random cut points, any number of slices), folded through the ledger interface and
    /// merged: the unsliced tables.
    @Test func randomBucketRangesMergeIntoTheUnslicedTables() throws {
        let workspace = try Self.prepare()
        let ledger = try SQLiteLedger(path: workspace.file("l.sqlite"), access: .readOnly)
        let settings = ReportJob.Settings(formats: [.csv], outputDirectory: workspace.file("whole"), generatedBy: "t", slices: 1)
        let whole = try ReportJob(settings: settings).run(ledger: ledger)
        for _ in 0..<5 {
            let cuts = Set((0..<Int.random(in: 1...9)).map { _ in Int.random(in: 1..<LedgerBucket.count) }).sorted()
            let bounds = [0] + cuts + [LedgerBucket.count]
            var paths: [String] = []
            for (index, (low, high)) in zip(bounds, bounds.dropFirst()).enumerated() {
                var engine = MetricsEngine(options: ReportOptions(asOf: whole.asOf))
                try ledger.forEachSubscription(buckets: low...(high - 1)) { platform, id, facts in
                    engine.add(platform == .apple ? AppleHistoryBuilder().history(id: id, facts: facts)
                                                  : GoogleHistoryBuilder().history(id: id, facts: facts))
                }
                let path = workspace.file("random-\(index)")
                try Data(PartialState(engine: engine, context: ["t": "t"], coverage: [low..<high]).encoded())
                    .write(to: URL(fileURLWithPath: path))
                paths.append(path)
            }
            var merged = try PartialState(decoding: [UInt8](try Data(contentsOf: URL(fileURLWithPath: paths[0]))))
            for path in paths.dropFirst().shuffled() {
                try merged.merge(PartialState(decoding: [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))))
            }
            #expect(merged.coverage == [0..<LedgerBucket.count])
            #expect(merged.engine.finish() == whole.tables, "cuts \(cuts)")

            // The same ranges handed out in a random order to one scan (as a thread of a report in slices takes
            // them): one engine, the same tables.
            var ranges = zip(bounds, bounds.dropFirst()).map { $0...($1 - 1) }.shuffled()
            var engine = MetricsEngine(options: ReportOptions(asOf: whole.asOf))
            try ledger.forEachSubscription(inRanges: { ranges.popLast() }) { platform, id, facts in
                engine.add(platform == .apple ? AppleHistoryBuilder().history(id: id, facts: facts)
                                              : GoogleHistoryBuilder().history(id: id, facts: facts))
            }
            #expect(ranges.isEmpty && engine.finish() == whole.tables, "cuts \(cuts)")
        }
    }

    @Test func aMergeRefusesWhatDoesNotBelongTogether() throws {
        let workspace = try Self.prepare()
        for k in 1...3 {
            _ = try SubledgerProcess.run(["report", "--db", "l.sqlite", "--shard", "\(k)/3", "--partial", "part-\(k)"] + Self.options,
                                         in: workspace, tag: "shard-\(k)")
        }
        _ = try SubledgerProcess.run(["report", "--db", "l.sqlite", "--shard", "2/3", "--partial", "utc-2",
                                      "--prices", "sim/prices.csv"], in: workspace, tag: "utc")
        // The same ledger after a change (its forged notifications... all of Apple's V2 quarantined, for want of
        // the test root): a slice of it belongs with none of the others.
        try FileManager.default.copyItem(atPath: workspace.file("l.sqlite"), toPath: workspace.file("changed.sqlite"))
        _ = try SubledgerProcess.run(["reprocess", "--db", "changed.sqlite"], in: workspace, tag: "change")
        _ = try SubledgerProcess.run(["report", "--db", "changed.sqlite", "--shard", "2/3", "--partial", "changed-2"] + Self.options,
                                     in: workspace, tag: "changed")
        let cases: [(files: [String], options: [String], message: String)] = [
            (["part-1", "part-3"], Self.options, "leave buckets 341..<682 out"),
            (["part-1", "part-2", "part-2", "part-3"], Self.options, "covers slices 341..<682 that another partial covers too"),
            (["part-1", "utc-2", "part-3"], Self.options, "computed with another --timezone: Asia/Tokyo here, UTC in the other"),
            (["part-1", "part-2", "part-3"], ["--prices", "sim/prices.csv"], "computed with another --timezone: UTC here, Asia/Tokyo"),
            (["part-1", "sim/prices.csv"], Self.options, "is not a subledger partial-state file"),
            (["part-1", "changed-2", "part-3"], Self.options,
             "changed-2 comes from another ingest (the ledger changed between the slices, or they read two ledgers)"),
        ]
        for (files, options, message) in cases {
            let merge = try SubledgerProcess.run(["report", "--merge"] + files + ["--out", "refused"] + options,
                                                 in: workspace, tag: "refused")
            #expect(merge.status == 2, "\(files): \(merge.stderr)")
            #expect(merge.stderr.contains(message), "\(files): \(merge.stderr)")
            #expect(!merge.stderr.contains("{"), "no JSON in a message: \(merge.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: workspace.file("refused/summary.json")))
        // A folder given as the partial's file is named as such.
        try FileManager.default.createDirectory(atPath: workspace.file("adir"), withIntermediateDirectories: false)
        let folder = try SubledgerProcess.run(["report", "--db", "l.sqlite", "--shard", "1/3", "--partial", "adir"] + Self.options,
                                              in: workspace, tag: "folder")
        #expect(folder.status == 2 && folder.stderr.contains("--partial adir is a folder"), "\(folder.stderr)")
    }
}

import ArgumentParser
import Facts
import Foundation
import Ingest
import Ledger
import Reporting

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show what has been ingested so far.",
        discussion: """
        Archives in the ledger (listing only those still being read, damaged, or with quarantined records), \
        record counts by source and outcome, quarantine by reason, damaged and skipped files and the date range \
        of the events, on stdout; --json prints the same as one JSON object instead.

        --verify also checks the whole ledger file (SQLite's integrity_check) and the ledger's own invariants \
        (every file's counts add up, every record comes from a file in the manifest, every fact matches its \
        key, ...). A damaged ledger exits 3 with what was found and how to recover.

        Example:
          subledger status --db ledger.sqlite --json
          subledger status --db ledger.sqlite --verify
        """)

    @OptionGroup var ledger: LedgerOptions

    @Flag(help: "Print the counts as one JSON object on stdout.")
    var json = false

    @Flag(help: "Check the whole ledger (SQLite integrity_check and the ledger's invariants); exit 3 when it is damaged.")
    var verify = false

    func run() throws {
        let store = try ledger.openForReading()
        if verify { try Self.verify(store, path: ledger.path) }
        let statistics: IngestStatistics
        let sources: [SourceCount]
        let files: [FileManifestEntry]
        do {
            statistics = try store.statistics()
            sources = try store.countsBySource()
            files = try store.files()
        } catch {
            throw CommandFailure.couldNotFinish(error.description)
        }
        let reading = files.filter { $0.state == .reading }
        var lines = ["ledger \(ledger.path): \(files.count) files (\(files.count - reading.count) done, \(reading.count) reading: in progress or interrupted)"]
        // Only the files that need a look: a nightly log of thousands of archives is read for what went wrong.
        for file in files where file.state == .reading || file.damage != nil || file.counts.quarantined > 0 {
            let counts = file.counts
            lines.append("  \(file.fingerprint.path): \(file.state.rawValue), \(counts.read) read, \(counts.used) used, "
                         + "\(counts.duplicate) duplicate, \(counts.excluded) excluded, \(counts.quarantined) quarantined")
        }
        for source in sources {
            lines.append("source \(source.source): \(source.used) used, \(source.excluded) excluded")
        }
        lines += statistics.summaryLines
        for skipped in statistics.skippedFiles {
            lines.append("skipped: \(skipped.file): \(skipped.reason)")
        }
        if verify { lines.append("verified: the ledger file and its invariants are sound") }
        if json {
            let bySource = JSONObject(sources.map { source in
                (source.source, .object(JSONObject([("used", .number(String(source.used))),
                                                    ("excluded", .number(String(source.excluded)))])))
            })
            print(SummaryJSON.ingestObject(statistics, extra: [("files_reading", String(reading.count)),
                                                               ("by_source", JSONWriter.compact(.object(bySource)))]))
        } else {
            print(lines.joined(separator: "\n"))
        }
    }

    /// Runs the full check; a damaged ledger is exit 3, with every problem and how to recover on stderr.
    static func verify(_ store: SQLiteLedger, path: String) throws {
        let problems: [String]
        do {
            problems = try store.verify()
        } catch {
            throw CommandFailure.couldNotFinish(error.description)
        }
        guard problems.isEmpty else {
            let list = problems.prefix(20).map { "  " + $0 }.joined(separator: "\n")
            throw CommandFailure.couldNotFinish("""
                \(path): the ledger is damaged:
                \(list)
                Restore it from a backup, or rebuild it from the archives: move \(path) aside and run \
                `subledger ingest` on all of them with a new --db
                """)
        }
    }
}

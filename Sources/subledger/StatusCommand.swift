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
        record counts by source and outcome, quarantine by reason, damaged files and the date range of the \
        events, on stdout; --json prints the same as one JSON object instead.

        Example:
          subledger status --db ledger.sqlite --json
        """)

    @OptionGroup var ledger: LedgerOptions

    @Flag(help: "Print the counts as one JSON object on stdout.")
    var json = false

    func run() throws {
        let store = try ledger.openForReading()
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
        statistics.sayWarnings()
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
}

import ArgumentParser
import Foundation

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "The nightly job: ingest the inputs, then write every report.",
        discussion: """
        Takes the options of `ingest` and of `report`. Files already ingested unchanged are skipped, so running \
        it every night over the whole archive folder reads only what is new. Exit 1 when some input was \
        quarantined, damaged or skipped in this run (the reports are still written). With --json, stdout holds only the \
        ingest counts as one JSON object (as `ingest --json`) and the report summary goes to stderr.

        Example:
          subledger run --db ledger.sqlite --out Reports --prices prices.csv archives/
          subledger run --timezone Europe/Berlin --apple-root-ca root.der archives/2025-06-*.ndjson.gz
        """
    )

    @Flag(help: "Print this run's ingest counts as one JSON object on stdout (the report summary then goes to stderr).")
    var json = false

    @OptionGroup var ledger: LedgerOptions
    @OptionGroup var report: ReportArguments
    @OptionGroup var options: IngestOptions

    func run() throws {
        let job = try report.makeJob()
        let statistics = try IngestCommand.ingest(ledger: ledger, options: options, json: json)
        let outcome = try job.runReporting(ledger: try ledger.openForReading(checked: true))
        outcome.warnAboutGaps()
        let summary = outcome.summaryText(timeZone: try report.timeZoneValue(), zoneName: report.timezone, directory: report.out)
        if json { FileHandle.standardError.write(Data((summary + "\n").utf8)) } else { print(summary) }
        if statistics.needsAttention { throw ExitCode(1) }
    }
}

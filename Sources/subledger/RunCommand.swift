import ArgumentParser
import Foundation
import Pipeline
import Reporting

struct RunCommand: LoggingCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "The nightly job: ingest the inputs, then write every report.",
        discussion: """
        Takes the options of `ingest` and of `report`. Files already ingested unchanged are skipped, so running \
        it every night over the whole archive folder reads only what is new. The ingest and report summaries \
        go to stdout; progress, warnings and errors to stderr (key=value lines when stderr is not a terminal). \
        Exit 1 when some input was quarantined, damaged or skipped in this run (the reports are still written). \
        With --json, stdout holds only the ingest counts as one JSON object (as `ingest --json`) and both \
        summaries go to stderr.

        Examples:
          subledger run --db ledger.sqlite --out Reports --prices prices.csv archives/
          subledger run --db ledger.sqlite --timezone Europe/Berlin \\
            --apple-root-ca root.der 'archives/2025-06-*.ndjson.gz'
        """
    )

    @Flag(help: "Print this run's ingest counts as one JSON object on stdout (the report summary then goes to stderr).")
    var json = false

    @OptionGroup var ledger: LedgerOptions
    @OptionGroup var report: ReportArguments
    @OptionGroup var options: IngestOptions
    @OptionGroup var output: OutputOptions

    func run() throws {
        let job = try report.makeJob(progress: progress)
        // An --out that cannot be made is a usage error before the ingest, not after it.
        do { try ReportWriter(directory: report.out).prepare() } catch { throw CommandFailure.report(.write(error)) }
        let ingested = try IngestCommand.ingest(ledger: ledger, options: options, json: json, progress: progress)
        // The job checks the ledger itself, beside the slices.
        let store = try ledger.openForReading()
        let outcome = try job.reporting { () throws(ReportJobError) in try job.run(ledger: store, location: ledger.location) }
        outcome.warnAboutGaps(logger: logger, pricesGiven: report.prices != nil)
        let summary = outcome.summaryText(timeZone: try report.timeZoneValue(), zoneName: report.timezone, directory: report.out)
        if json { FileHandle.standardError.write(Data((summary + "\n").utf8)) } else { print(summary) }
        if ingested.needsAttention { throw ExitCode(1) }
    }
}

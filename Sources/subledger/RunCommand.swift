import ArgumentParser
import Foundation

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "The nightly job: ingest the inputs, then write every report.",
        discussion: """
        Takes the options of `ingest` and of `report`. Files already ingested unchanged are skipped, so running \
        it every night over the whole archive folder reads only what is new. Exit 1 when some input was \
        quarantined or damaged in this run (the reports are still written).

        Example:
          subledger run --db ledger.sqlite --out Reports --prices prices.csv archives/
          subledger run --timezone Europe/Berlin --apple-root-ca root.der archives/2025-06-*.ndjson.gz
        """
    )

    @OptionGroup var ledger: LedgerOptions
    @OptionGroup var report: ReportArguments
    @OptionGroup var options: IngestOptions

    func run() throws {
        let job = try report.makeJob()
        let statistics = try IngestCommand.ingest(ledger: ledger, options: options, json: false)
        let outcome = try job.runReporting(ledger: try ledger.openForReading())
        outcome.warnAboutGaps()
        print(outcome.summaryText(timeZone: try report.timeZoneValue(), zoneName: report.timezone, directory: report.out))
        if statistics.quarantined > 0 || !statistics.damagedFiles.isEmpty { throw ExitCode(1) }
    }
}

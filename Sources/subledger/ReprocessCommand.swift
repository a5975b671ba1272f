import ArgumentParser
import Facts
import Foundation
import Ingest
import Ledger
import Pipeline
import Reporting

struct ReprocessCommand: LoggingCommand {
    static let configuration = CommandConfiguration(
        commandName: "reprocess",
        abstract: "Rebuild the ledger's facts from the payloads it keeps, with today's rules and options.",
        discussion: """
        No archive is read: the ledger keeps every record it was given. Run it after fixing a verification \
        option, to release what it quarantined (--quarantined retries only quarantined records), or after an \
        upgrade whose rules changed (`report` then refuses with exit 2 until this has run; `ingest` and `run` \
        do it by themselves first). Give the verification options of your nightly job: records are verified \
        again with them. A ledger written by the release before payloads were kept is upgraded: its archives \
        are read again from the paths it recorded, and every file that is gone or changed is named (exit 1) so \
        that you can ingest it again. Killed at any point, running it again finishes the work. A summary goes \
        to stdout (with --json, one JSON object instead, and the summary to stderr).

        Examples:
          subledger reprocess --db ledger.sqlite --quarantined \\
            --apple-root-ca AppleRootCA-G3.cer
          subledger reprocess --db ledger.sqlite --bundle-id com.example.app \\
            --package-name com.example.app
        """)

    @OptionGroup var ledger: LedgerOptions

    @Flag(help: "Print what was reprocessed and the ledger's counts as one JSON object on stdout.")
    var json = false

    @Flag(help: "Only retry quarantined records; the facts of used records stay as they are.")
    var quarantined = false

    @OptionGroup var verification: VerificationOptions
    @OptionGroup var output: OutputOptions

    func run() throws {
        try ledger.requireExisting()
        let times = PlausibleTimes.ofThisRun()
        let job = ReprocessJob(ledger: ledger.location, parser: RecordParser(times: times),
                               translator: try verification.makeTranslator(times: times), progress: progress)
        let outcome: ReprocessOutcome
        do {
            outcome = try job.run(quarantined ? .quarantined : .full)
        } catch {
            throw CommandFailure.ingest(error)
        }
        let summary = outcome.summaryLines.joined(separator: "\n")
        if json {
            FileHandle.standardError.write(Data((summary + "\n").utf8))
            let statistics: IngestStatistics
            do { statistics = try ledger.openForReading().statistics() } catch let error as LedgerError { throw CommandFailure.ledger(error) }
            let unreadable = outcome.unreadable.map { file -> JSON in
                .object(JSONObject([("file", .string(file.path)), ("reason", .string(file.reason))]))
            }
            print(SummaryJSON.ingestObject(statistics, extra: [
                ("reprocessed", String(outcome.records.read)),
                ("released", String(outcome.released)),
                ("unreadable_files", JSONWriter.compact(.array(unreadable))),
            ]))
        } else {
            print(summary)
        }
        if outcome.needsAttention { throw ExitCode(1) }
    }
}

extension ReprocessOutcome {
    /// What a reprocess did, in a few lines for people. The split is by what each record's own payload says:
    /// `status` (and `--json`) also count as excluded the records of a subscription another record shows to be
    /// a test purchase, which the line says rather than read the whole ledger again.
    var summaryLines: [String] {
        let counts = records
        var lines = ["reprocess (\(scope.rawValue)): \(counts.read) records translated again = \(counts.used) used + "
                     + "\(counts.duplicate) duplicate + \(counts.excluded) excluded + \(counts.quarantined) quarantined, "
                     + "each by its own payload (`subledger status` counts the records of test purchases as excluded); "
                     + "\(released) released from the quarantine"]
        if reread.files > 0 {
            lines.append("reprocess: \(reread.files) archives read again for records kept without their payload")
        }
        lines += unreadable.map { "reprocess: \($0.path): \($0.reason) (its records are not in the ledger)" }
        return lines
    }

    /// Whether the run must exit 1 (cli.md: "finished but some input was quarantined, damaged or skipped"):
    /// records are (still) quarantined, files could not be read again, or what was read again was damaged.
    var needsAttention: Bool {
        records.quarantined > 0 || reread.quarantined > 0 || !unreadable.isEmpty || !reread.damagedFiles.isEmpty
    }
}

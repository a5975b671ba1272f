import ArgumentParser
import Foundation

/// The `subledger` command line: a thin layer over `Pipeline` and `Simulator`.
@main
struct Subledger: ParsableCommand {
    /// The version `--version` prints and `summary.json`'s `generated_by` names.
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        abstract: "Batch ETL and revenue reports for App Store and Google Play subscriptions.",
        discussion: """
        Reads archived store payloads into a ledger (an SQLite file, or PostgreSQL) and computes churn, \
        retention, trial conversion, billing-issue recovery, revenue and MRR movements as CSV, JSON and HTML. \
        Data and summaries go to stdout; progress, warnings and errors to stderr (key=value lines with a time \
        when stderr is not a terminal; --log-level, --quiet).

        Exit codes: 0 all good; 1 finished, but some input was quarantined, damaged or skipped (the summary \
        says what); 2 usage or configuration error (fix the command, a file or the ledger, then run again); \
        3 could not finish (disk full, database server gone: run again; nothing half-written stays).

        Example (the nightly job):
          subledger run --db ledger.sqlite --out Reports --prices prices.csv archives/
        """,
        version: version,
        subcommands: [IngestCommand.self, ReportCommand.self, RunCommand.self, StatusCommand.self,
                      QuarantineCommand.self, ReprocessCommand.self, SimulateCommand.self]
    )

    /// Runs the command and maps every failure to the exit codes of `cli.md`. Errors of the command line itself
    /// (ArgumentParser's, with the usage) are printed as they are; every other failure is said through the
    /// command's logger (`--log-level`: logfmt when stderr is not a terminal), its technical detail at debug level.
    static func main() {
        var command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            exitForCommandLine(error)
        }
        // `help` (and `--help` after a subcommand) parses as ArgumentParser's own command, which has no options.
        let logger = (command as? any LoggingCommand)?.logger ?? OutputOptions.logger(command: "subledger", level: .info)
        let failure: CommandFailure
        do {
            try command.run()
            Foundation.exit(0)
        } catch let exit as ExitCode {
            Foundation.exit(exit.rawValue)
        } catch let known as CommandFailure {
            failure = known
        } catch where exitCode(for: error) != .failure {
            // ArgumentParser's own (the help it was asked for, a validation error): as on the command line.
            exitForCommandLine(error)
        } catch {
            failure = .unexpected(error)
        }
        if let detail = failure.detail, !detail.isEmpty { logger.debug("failure detail", metadata: ["detail": "\(detail)"]) }
        logger.error("\(failure.message)", metadata: ["exit_code": "\(failure.exitCode.rawValue)"])
        Foundation.exit(failure.exitCode.rawValue)
    }

    /// Prints an error of the command line (or the help a `--help` asked for) and exits: ArgumentParser reports
    /// usage errors as EX_USAGE (64), cli.md wants 2.
    private static func exitForCommandLine(_ error: any Error) -> Never {
        let code = exitCode(for: error)
        let message = fullMessage(for: error)
        if code == .success {
            print(message)
            Foundation.exit(0)
        }
        if !message.isEmpty { FileHandle.standardError.write(Data("\(message)\n".utf8)) }
        Foundation.exit(code == .validationFailure || code == .failure ? CommandFailure.usage("").exitCode.rawValue : code.rawValue)
    }
}

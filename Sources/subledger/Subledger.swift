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
        Reads archived store payloads into a SQLite ledger and computes churn, retention, trial conversion, \
        billing-issue recovery and revenue as CSV, JSON and HTML.

        Exit codes: 0 all good; 1 finished, but some input was quarantined or damaged; 2 usage or configuration \
        error; 3 could not finish.

        Example (the nightly job):
          subledger run --db ledger.sqlite --out Reports --prices prices.csv archives/
        """,
        version: version,
        subcommands: [IngestCommand.self, ReportCommand.self, RunCommand.self, StatusCommand.self,
                      QuarantineCommand.self, ReprocessCommand.self, SimulateCommand.self]
    )

    /// Runs the command and maps every failure to the exit codes of `cli.md`.
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let exit as ExitCode {
            Foundation.exit(exit.rawValue)
        } catch let failure as CommandFailure {
            FileHandle.standardError.write(Data("subledger: \(failure.message)\n".utf8))
            Foundation.exit(failure.exitCode.rawValue)
        } catch {
            let code = exitCode(for: error)
            let message = fullMessage(for: error)
            if code == .success {
                print(message)
                Foundation.exit(0)
            }
            if !message.isEmpty { FileHandle.standardError.write(Data("\(message)\n".utf8)) }
            // ArgumentParser reports usage errors as EX_USAGE (64); cli.md wants 2. Any other error it maps to 1,
            // which cli.md keeps for "finished but some input was quarantined": an unexpected error did not
            // finish, so it is 3.
            switch code {
            case .validationFailure: Foundation.exit(CommandFailure.usage("").exitCode.rawValue)
            case .failure: Foundation.exit(CommandFailure.couldNotFinish("").exitCode.rawValue)
            default: Foundation.exit(code.rawValue)
            }
        }
    }
}

/// A failure with the exit code `cli.md` gives it and a message that says what to do.
struct CommandFailure: Error {
    var message: String
    var exitCode: ExitCode

    /// Exit 2: the command line or a configuration file is wrong.
    static func usage(_ message: String) -> CommandFailure { CommandFailure(message: message, exitCode: ExitCode(2)) }
    /// Exit 3: the work could not be finished; nothing half-written stays.
    static func couldNotFinish(_ message: String) -> CommandFailure { CommandFailure(message: message, exitCode: ExitCode(3)) }
}

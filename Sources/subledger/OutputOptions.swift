import ArgumentParser
import Foundation
import Logging
import Pipeline

/// `--log-level` and `--quiet`, on every command: how much it says on stderr. Data and summaries go to stdout
/// whatever these say.
struct OutputOptions: ParsableArguments {
    @Option(name: .customLong("log-level"),
            help: ArgumentHelp("How much to say on stderr: info has progress, notes and warnings; debug adds the technical detail of failures.",
                               valueName: "LEVEL"))
    var logLevel: Logger.Level = .info

    @Flag(name: [.short, .long], help: "Say only warnings and errors on stderr: no progress, no notes.")
    var quiet = false

    /// The level records must reach: `--log-level`, raised to `warning` by `--quiet`.
    var level: Logger.Level { quiet ? max(logLevel, .warning) : logLevel }

    /// The logger of `command`: stderr, logfmt when stderr is not a terminal (see ``StandardErrorLogHandler``),
    /// every record tagged `command=NAME`.
    func logger(command: String) -> Logger {
        Self.logger(command: command, level: level)
    }

    /// The logger of `command` at `level`.
    static func logger(command: String, level: Logger.Level) -> Logger {
        var logger = Logger(label: "subledger") { _ in StandardErrorLogHandler(level: level) }
        logger[metadataKey: "command"] = .string(command)
        return logger
    }

    /// Progress and notes of `command`'s run: none with `--quiet` (or a level above `info`).
    func progress(command: String) -> ProgressOutput {
        .standardError(logger(command: command), showsProgress: level <= .info)
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// A command whose `--log-level` and `--quiet` the entry point reads to say its failure.
protocol LoggingCommand: ParsableCommand {
    var output: OutputOptions { get }
}

extension LoggingCommand {
    /// The command's name, as `command=` in its log records.
    static var name: String { configuration.commandName ?? "subledger" }

    var logger: Logger { output.logger(command: Self.name) }
    var progress: ProgressOutput { output.progress(command: Self.name) }
}

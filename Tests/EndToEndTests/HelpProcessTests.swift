import Foundation
import Testing

/// `--help` as a new user reads it (issue 15, item 12): on stdout with exit 0 for every command, with examples
/// that fit an 80-column terminal (a long example wrapped by the help formatter breaks the command in two,
/// and pasted, runs half of it), and texts that say where the output goes as the command does it.
@Suite struct HelpProcessTests {
    static let commands = ["", "ingest", "report", "run", "status", "quarantine", "reprocess", "simulate"]

    @Test(arguments: commands)
    func helpIsOnStdoutWithExamplesThatDoNotWrap(command: String) throws {
        let workspace = try TemporaryDirectory()
        let arguments = (command.isEmpty ? [] : [command]) + ["--help"]
        let result = try SubledgerProcess.run(arguments, in: workspace, tag: "help")
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        #expect(result.stderr.isEmpty, "\(arguments): help goes to stdout: \(result.stderr)")
        #expect(result.stdout.contains("USAGE: subledger"), "\(arguments)")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex { $0.hasPrefix("Example") }, "\(arguments) has an example")
        let examples = lines[(start + 1)...].prefix { !$0.isEmpty }
        #expect(!examples.isEmpty)
        for line in examples {
            #expect(line.hasPrefix("  subledger ") || line.hasPrefix("    --") || line.hasPrefix("    "),
                    "\(arguments): an example line wrapped by the formatter: \(line)")
            #expect(line.count <= 78, "\(arguments): \(line.count) columns: \(line)")
        }
        // A continued example ends its line with a backslash, the way a shell joins it.
        for (index, line) in examples.enumerated() where index + 1 < examples.count && examples[examples.startIndex + index + 1].hasPrefix("    ") {
            #expect(line.hasSuffix(" \\"), "\(arguments): \(line)")
        }
        if !command.isEmpty {
            #expect(result.stdout.contains("--log-level <LEVEL>") && result.stdout.contains("-q, --quiet"), "\(arguments)")
        }
        #expect(!result.stdout.contains("summary goes to stderr;"), "summaries go to stdout (cli.md)")
    }

    /// `help COMMAND` is ArgumentParser's own command: it works too (it has none of our options to read).
    @Test func helpSubcommandWorks() throws {
        let workspace = try TemporaryDirectory()
        let result = try SubledgerProcess.run(["help", "report"], in: workspace, tag: "help")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("USAGE: subledger report"))
        let version = try SubledgerProcess.run(["--version"], in: workspace, tag: "version")
        #expect(version.status == 0 && !version.stdout.isEmpty)
    }
}

import AppStore
import ArgumentParser
import Facts
import Foundation
import Ingest
import Pipeline
import PlayStore
import Reporting

/// The options that say how to trust what is read: `ingest`, `run` and `reprocess` take them.
struct VerificationOptions: ParsableArguments {
    @Option(name: .customLong("apple-root-ca"),
            help: ArgumentHelp("A trusted root certificate (DER or PEM) for App Store JWS signatures, instead of Apple Root CA - G3. Repeatable.",
                               valueName: "FILE"))
    var appleRootCAs: [String] = []

    @Option(name: .customLong("bundle-id"),
            help: ArgumentHelp("Accept signed App Store payloads of this app only (others are quarantined). Repeatable.", valueName: "ID"))
    var bundleIds: [String] = []

    @Option(name: .customLong("package-name"),
            help: ArgumentHelp("Accept Google Play payloads of this app only (others are quarantined). Repeatable.", valueName: "NAME"))
    var packageNames: [String] = []

    /// The translator of both stores, dispatching on the record's platform, accepting times in `times`. Trusted
    /// roots come from `--apple-root-ca` (DER, or PEM with one or more certificates), else the embedded Apple
    /// Root CA - G3. A root file that is missing or not a certificate is a usage error (exit 2).
    func makeTranslator(times: PlausibleTimes) throws -> RecordTranslator {
        var roots: [[UInt8]] = []
        var files: [String] = []
        for path in appleRootCAs {
            let certificates = try Self.certificates(in: path)
            roots += certificates
            files += Array(repeating: path, count: certificates.count)
        }
        let apple: AppStoreTranslator
        do {
            apple = try AppStoreTranslator(trustedRoots: roots.isEmpty ? AppStoreTranslator.appleRootCAG3 : roots,
                                           bundleIds: Set(bundleIds), times: times)
        } catch {
            // The X.509 parser's own words (type names, source lines) are for the debug log.
            guard case .unparsableRoot(let index, let reason) = error, files.indices.contains(index) else {
                throw CommandFailure.usage("--apple-root-ca: \(error.description)")
            }
            throw CommandFailure.usage("--apple-root-ca \(files[index]): not a valid X.509 certificate (DER, or PEM blocks of one)",
                                       detail: reason)
        }
        return RecordTranslator(stores: [apple, PlayStoreTranslator(packageNames: Set(packageNames), times: times)])
    }

    /// The DER certificates in a root file: the bytes themselves, or every PEM `CERTIFICATE` block.
    static func certificates(in path: String) throws -> [[UInt8]] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandFailure.usage("--apple-root-ca \(path): cannot read the file")
        }
        let bytes = [UInt8](data)
        let begin = "-----BEGIN CERTIFICATE-----"
        let end = "-----END CERTIFICATE-----"
        guard let text = String(bytes: bytes, encoding: .utf8), text.contains(begin) else {
            // DER: an X.509 certificate is an ASN.1 SEQUENCE; the translator parses it fully.
            guard bytes.first == 0x30 else {
                throw CommandFailure.usage("--apple-root-ca \(path): neither a DER nor a PEM certificate")
            }
            return [bytes]
        }
        var certificates: [[UInt8]] = []
        var rest = Substring(text)
        while let start = rest.range(of: begin) {
            guard let stop = rest.range(of: end, range: start.upperBound..<rest.endIndex),
                  let der = Data(base64Encoded: String(rest[start.upperBound..<stop.lowerBound]),
                                 options: .ignoreUnknownCharacters) else {
                throw CommandFailure.usage("--apple-root-ca \(path): a PEM certificate block is not valid base64")
            }
            certificates.append([UInt8](der))
            rest = rest[stop.upperBound...]
        }
        return certificates
    }
}

/// The options that say what to read and how to trust it; `run` reuses them.
struct IngestOptions: ParsableArguments {
    @OptionGroup var verification: VerificationOptions

    @Argument(help: ArgumentHelp("Files, folders (walked recursively) or globs to read.", valueName: "INPUT"))
    var inputs: [String]
}

struct IngestCommand: LoggingCommand {
    static let configuration = CommandConfiguration(
        commandName: "ingest",
        abstract: "Read archived store payloads into the ledger database.",
        discussion: """
        Reads JSON (one record per line, a document, or an array), gzip, tar and zip archives (files, folders, \
        globs), each recognised by its content. Every record ends up used, duplicate, excluded (sandbox, test, \
        family-shared) or quarantined with a reason. Unchanged files already in the ledger are skipped; \
        ingesting again changes nothing. Files that are not inputs (other formats, FIFOs, broken links) are \
        skipped and said; hidden files (.name) in a folder are not inputs. A summary goes to stdout (with --json, stdout \
        holds only this run's counts as one JSON object and the summary goes to stderr); progress, skipped and \
        damaged files go to stderr. Exit 1 when some input (a record, or an unusable part of one) was \
        quarantined, damaged or skipped; exit 2 for a path that does not exist, an empty folder or a glob that \
        matches nothing.

        Example:
          subledger ingest --db ledger.sqlite --bundle-id com.example.app \\
            --package-name com.example.app archives/
        """)

    @OptionGroup var ledger: LedgerOptions

    @Flag(help: "Print this run's counts as one JSON object on stdout.")
    var json = false

    @OptionGroup var options: IngestOptions
    @OptionGroup var output: OutputOptions

    func run() throws {
        if try Self.ingest(ledger: ledger, options: options, json: json, progress: progress).needsAttention { throw ExitCode(1) }
    }

    /// Reads the inputs into the ledger and prints the summary on stdout (cli.md: "data and summaries to
    /// stdout"); with `json`, stdout holds only the counts as one JSON object and the summary goes to stderr.
    /// Every skipped and damaged file is also a warning on stderr (cli.md). Shared by `ingest` and `run`.
    static func ingest(ledger: LedgerOptions, options: IngestOptions, json: Bool, progress: ProgressOutput) throws -> IngestOutcome {
        let times = PlausibleTimes.ofThisRun()
        let translator = try options.verification.makeTranslator(times: times)
        let job = IngestJob(ledger: ledger.location, parser: RecordParser(times: times), translator: translator,
                            progress: progress)
        let outcome: IngestOutcome
        do {
            outcome = try job.run(inputs: options.inputs.map(InputPath.init(argument:)))
        } catch {
            throw CommandFailure.ingest(error)
        }
        let statistics = outcome.statistics
        for copy in outcome.copies {
            progress.logger?.warning("skipped \(copy.path): already ingested as \(copy.original) (the same bytes), not read again",
                                     metadata: ["file": "\(copy.path)", "reason": "already ingested as \(copy.original)"])
        }
        for skipped in statistics.skippedFiles {
            progress.logger?.warning("skipped \(skipped.file): \(skipped.reason)",
                                     metadata: ["file": "\(skipped.file)", "reason": "\(skipped.reason)"])
        }
        for damage in statistics.damagedFiles {
            progress.logger?.warning("damaged \(damage.file) at byte \(damage.offset): \(damage.reason); the records before it were read",
                                     metadata: ["file": "\(damage.file)", "offset": "\(damage.offset)", "reason": "\(damage.reason)"])
        }
        var lines: [String] = []
        if let reprocess = outcome.reprocess { lines += reprocess.summaryLines }
        lines.append("ingest: \(statistics.files) files read into \(ledger.path), \(outcome.unchanged.count) skipped (unchanged)"
                     + (outcome.copiesOfEmptyFiles.isEmpty ? ""
                        : ", \(outcome.copiesOfEmptyFiles.count) with the same bytes as a file holding no records"))
        lines += outcome.copies.map { "skipped: \($0.path): already ingested as \($0.original)" }
        if !statistics.skippedFiles.isEmpty {
            lines.append("skipped: \(statistics.skippedFiles.count) files that are not inputs (listed on stderr)")
        }
        lines += statistics.summaryLines
        let summary = lines.joined(separator: "\n")
        if json { FileHandle.standardError.write(Data((summary + "\n").utf8)) } else { print(summary) }
        if let logger = progress.logger { statistics.sayWarnings(to: logger) }
        if json {
            // Copies of archives already read are skipped files too: not read, and said.
            var shown = statistics
            shown.skippedFiles += outcome.copies.map {
                IngestStatistics.Skipped(file: $0.path, reason: "already ingested as \($0.original)")
            }
            print(SummaryJSON.ingestObject(shown, extra: [("unchanged_files", String(outcome.unchanged.count))]))
        }
        return outcome
    }
}

extension IngestOutcome {
    /// Whether the run must exit 1: something was quarantined, damaged or skipped (cli.md), here or in the
    /// reprocess it did first.
    var needsAttention: Bool {
        statistics.needsAttention || !copies.isEmpty || (reprocess?.needsAttention ?? false)
    }
}

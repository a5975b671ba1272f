import AppStore
import ArgumentParser
import Facts
import Foundation
import Ingest
import Pipeline
import PlayStore
import Reporting

/// The options that say what to read and how to trust it; `run` reuses them.
struct IngestOptions: ParsableArguments {
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

    @Argument(help: ArgumentHelp("Files, folders (walked recursively) or globs to read.", valueName: "INPUT"))
    var inputs: [String]

    /// The translator of both stores, dispatching on the record's platform. Trusted roots come from
    /// `--apple-root-ca` (DER, or PEM with one or more certificates), else the embedded Apple Root CA - G3.
    /// A root file that is missing or not a certificate is a usage error (exit 2).
    func makeTranslator() throws -> RecordTranslator {
        var roots: [[UInt8]] = []
        for path in appleRootCAs { roots += try Self.certificates(in: path) }
        let apple: AppStoreTranslator
        do {
            apple = try AppStoreTranslator(trustedRoots: roots.isEmpty ? AppStoreTranslator.appleRootCAG3 : roots,
                                           bundleIds: Set(bundleIds))
        } catch {
            throw CommandFailure.usage("--apple-root-ca: \(error.description)")
        }
        return .stores(apple: apple, google: PlayStoreTranslator(packageNames: Set(packageNames)))
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

struct IngestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ingest",
        abstract: "Read archived store payloads into the ledger database.",
        discussion: """
        Reads JSON (one record per line, a document, or an array), gzip, tar and zip archives (files, folders, \
        globs), each recognised by its content. Every record ends up used, duplicate, excluded (sandbox, test, \
        family-shared) or quarantined with a reason. Unchanged files already in the ledger are skipped; \
        ingesting again changes nothing. Files that are not inputs (other formats, FIFOs, broken links) are \
        skipped and listed on stderr; hidden files (.name) are not inputs. A summary goes to stdout; --json \
        prints the counts of this run on stdout instead. Exit 1 when some input was quarantined, damaged or \
        skipped; exit 2 for a path that does not exist, an empty folder or a glob that matches nothing.

        Example:
          subledger ingest --db ledger.sqlite --bundle-id com.example.app --package-name com.example.app archives/
        """)

    @OptionGroup var ledger: LedgerOptions

    @Flag(help: "Print this run's counts as one JSON object on stdout.")
    var json = false

    @OptionGroup var options: IngestOptions

    func run() throws {
        let statistics = try Self.ingest(ledger: ledger, options: options, json: json)
        if statistics.needsAttention { throw ExitCode(1) }
    }

    /// Reads the inputs into the ledger and prints the summary on stdout (cli.md: "data and summaries to
    /// stdout"); with `json`, stdout holds only the counts as one JSON object and the summary goes to stderr.
    /// Shared by `ingest` and `run`.
    static func ingest(ledger: LedgerOptions, options: IngestOptions, json: Bool) throws -> IngestStatistics {
        let translator = try options.makeTranslator()
        let job = IngestJob(ledgerPath: ledger.path, translator: translator, progress: .standardError)
        var unchanged: [String] = []
        let statistics: IngestStatistics
        do {
            statistics = try job.run(inputs: options.inputs.map(InputPath.init(argument:)), unchanged: &unchanged)
        } catch {
            switch error {
            case .input(let message): throw CommandFailure.usage(message)
            case .busy, .ledger: throw CommandFailure.couldNotFinish(error.description)
            }
        }
        for skipped in statistics.skippedFiles {
            FileHandle.standardError.write(Data("skipped \(skipped.file): \(skipped.reason)\n".utf8))
        }
        var lines = ["ingest: \(statistics.files) files read into \(ledger.path), \(unchanged.count) unchanged (already read)"]
        if !statistics.skippedFiles.isEmpty {
            lines.append("skipped: \(statistics.skippedFiles.count) files that are not inputs (listed on stderr)")
        }
        lines += statistics.summaryLines
        let summary = lines.joined(separator: "\n")
        if json { FileHandle.standardError.write(Data((summary + "\n").utf8)) } else { print(summary) }
        if json {
            print(SummaryJSON.ingestObject(statistics, extra: [("unchanged_files", JSONWriter.compact(.array(unchanged.map { .string($0) })))]))
        }
        return statistics
    }
}

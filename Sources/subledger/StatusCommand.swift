import ArgumentParser
import Facts
import Foundation
import Ingest
import Ledger
import Logging
import Pipeline
import Reporting

struct StatusCommand: LoggingCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show what has been ingested so far.",
        discussion: """
        Archives in the ledger (listing only those still being read, damaged, or with quarantined records), \
        record counts by source and outcome, quarantine by reason, damaged and skipped files and the date range \
        of the events, on stdout; --json prints the same as one JSON object instead. \
        --record shows one record (by its dedup key, or by the place it was read: FILE:LINE, \
        FILE[MEMBER]:POSITION) with its bytes and the facts it stated first; --subscription shows the facts of \
        one subscription (Apple original_transaction_id, Google purchase token), each with the record that \
        stated it first. --verify also checks the whole ledger (SQLite's integrity_check, and on both engines \
        the ledger's own invariants: every file's counts add up, every record comes from a file in the \
        manifest, every fact matches its key, ...); a damaged ledger exits 2 with what was found and how to \
        recover.

        Examples:
          subledger status --db ledger.sqlite --json
          subledger status --db ledger.sqlite --record daily/2024-03-01.ndjson.gz:17
          subledger status --db ledger.sqlite --subscription 2000000512345678
          subledger status --db ledger.sqlite --verify
        """)

    @OptionGroup var ledger: LedgerOptions

    @Flag(help: "Print the counts as one JSON object on stdout.")
    var json = false

    @Option(help: ArgumentHelp("Show this record and its facts: a dedup key, or FILE:POSITION where it was read.",
                               valueName: "REF"))
    var record: String?

    @Option(help: ArgumentHelp("Show the facts of this subscription, each with the record stating it.", valueName: "ID"))
    var subscription: String?

    @Flag(help: "Check the whole ledger (SQLite integrity_check and the ledger's invariants); exit 2 when it is damaged.")
    var verify = false

    @OptionGroup var output: OutputOptions

    func run() throws {
        let store = try ledger.openForReading()
        if let record { return try Self.show(record: record, in: store) }
        if let subscription { return try Self.show(subscription: subscription, in: store) }
        if verify { try Self.verify(store) }
        let statistics: IngestStatistics
        let sources: [SourceCount]
        let files: [FileManifestEntry]
        do {
            statistics = try store.statistics()
            sources = try store.countsBySource()
            files = try store.files()
        } catch {
            throw CommandFailure.ledger(error)
        }
        let reading = files.filter { $0.state == .reading }
        var lines = ["ledger \(ledger.path): \(files.count) files (\(files.count - reading.count) done, \(reading.count) reading: in progress or interrupted)"]
        // Only the files that need a look: a nightly log of thousands of archives is read for what went wrong.
        for file in files where file.state == .reading || file.damage != nil || file.counts.quarantined > 0 {
            let counts = file.counts
            lines.append("  \(file.fingerprint.path): \(file.state.rawValue), \(counts.read) read, \(counts.used) used, "
                         + "\(counts.duplicate) duplicate, \(counts.excluded) excluded, \(counts.quarantined) quarantined")
        }
        for source in sources {
            lines.append("source \(source.source): \(source.used) used, \(source.excluded) excluded")
        }
        lines += statistics.summaryLines
        for skipped in statistics.skippedFiles {
            lines.append("skipped: \(skipped.file): \(skipped.reason)")
        }
        if verify { lines.append("verified: the ledger and its invariants are sound") }
        // cli.md: every skipped file and every non-zero warning is also said on stderr, with --json too.
        for skipped in statistics.skippedFiles {
            logger.warning("skipped \(skipped.file): \(skipped.reason)",
                           metadata: ["file": "\(skipped.file)", "reason": "\(skipped.reason)"])
        }
        statistics.sayWarnings(to: logger)
        if json {
            let bySource = JSONObject(sources.map { source in
                (source.source, .object(JSONObject([("used", .number(String(source.used))),
                                                    ("excluded", .number(String(source.excluded)))])))
            })
            print(SummaryJSON.ingestObject(statistics, extra: [("files_reading", String(reading.count)),
                                                               ("by_source", JSONWriter.compact(.object(bySource)))]))
        } else {
            print(lines.joined(separator: "\n"))
        }
    }

    /// Runs the full check; a damaged ledger is exit 2 (an unreadable database, cli.md), with every problem and
    /// how to recover on stderr.
    static func verify(_ store: any LedgerStore) throws {
        let problems: [String]
        do {
            problems = try store.verify(sources: Set(StoreCatalog.recognizers.flatMap(\.sources)))
        } catch {
            throw CommandFailure.ledger(error)
        }
        guard problems.isEmpty else {
            let list = problems.prefix(20).map { "  " + $0 }.joined(separator: "\n")
            throw CommandFailure.usage("""
                \(store.location): the ledger is damaged:
                \(list)
                Restore it from a backup, or rebuild it from the archives: run `subledger ingest` on all of them \
                into a new ledger (a new --db)
                """)
        }
    }
}

extension StatusCommand {
    /// `--record`: the records a reference names, with their bytes and facts; exit 2 when there is none.
    static func show(record reference: String, in store: any LedgerStore) throws {
        let details: [RecordDetail]
        do {
            details = try store.records(matching: reference)
        } catch {
            throw CommandFailure.ledger(error)
        }
        guard !details.isEmpty else {
            throw CommandFailure.usage("""
                no stored record is \(reference): give a dedup key or the place a record was first read \
                (FILE:LINE, FILE[MEMBER]:POSITION, as `subledger quarantine` lists places); quarantined records \
                are listed by `subledger quarantine`
                """)
        }
        var lines: [String] = []
        for detail in details {
            lines.append("record \(detail.dedupKey)")
            lines.append("  read at: \(detail.provenance)")
            lines.append("  source: \(detail.source); \(detail.outcome)\(detail.reason.map { " (\($0))" } ?? ""); rules version \(detail.rulesVersion)")
            if let receivedAt = detail.receivedAt { lines.append("  received_at: \(Timestamp.rfc3339(receivedAt))") }
            lines.append("  payload: " + (detail.raw.map { String(decoding: $0, as: UTF8.self) } ?? "(not kept: ingested by a release before payloads were kept)"))
            lines.append("  facts it stated first: \(detail.facts.count) (the others it states, earlier records had stated)")
            lines += detail.facts.map { "    " + $0.line }
        }
        print(lines.joined(separator: "\n"))
    }

    /// `--subscription`: the facts of one subject, each naming its record; exit 2 when there is none.
    static func show(subscription: String, in store: any LedgerStore) throws {
        let facts: [AttributedFact]
        do {
            facts = try store.facts(ofSubject: subscription)
        } catch {
            throw CommandFailure.ledger(error)
        }
        guard !facts.isEmpty else {
            throw CommandFailure.usage("no facts about \(subscription): give an Apple original_transaction_id or a Google purchase token")
        }
        print(facts.map { "\($0.fact.line)  [record \($0.record ?? "unknown")]" }.joined(separator: "\n"))
    }
}

extension Fact {
    /// One line for people: the columns that are set, times in RFC 3339.
    var line: String {
        var parts = ["\(platform.rawValue) \(subject) \(kind.rawValue) at \(Timestamp.rfc3339(at))",
                     "observed \(Timestamp.rfc3339(observedAt))"]
        if let ref { parts.append("ref \(ref)") }
        if let detail { parts.append("detail \(detail)") }
        if let productId { parts.append("product \(productId)") }
        if let end { parts.append("end \(Timestamp.rfc3339(end))") }
        if let amountMicros { parts.append("amount \(amountMicros) micros") }
        if let currency { parts.append("currency \(currency)") }
        if flags.rawValue != 0 { parts.append("flags \(flags.rawValue)") }
        return parts.joined(separator: ", ")
    }
}

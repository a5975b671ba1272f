import AppStore
import Facts
import Foundation
import Ledger
import SubscriptionMetrics
import PlayStore
import Reporting

/// The report stage: reads the ledger one subscription at a time, rebuilds each history with its store's
/// builder, folds it into the metrics, and writes the report files.
///
/// Memory holds one subscription's facts and the metric aggregates, never the whole ledger: the ledger streams
/// subscriptions in order (`LedgerStore.forEachSubscription`) and `MetricsEngine` keeps only per-month sums.
public struct ReportJob {
    /// The output formats of `--format`.
    public enum Format: String, CaseIterable, Sendable {
        case csv, json, html
    }

    /// What to compute and where to write it.
    public struct Settings: Sendable {
        /// The as-of time (ms, UTC); `nil` means the latest time the ledger has a statement from a store.
        public var asOf: Millis?
        /// The reporting time zone (months are calendar months there).
        public var timeZone: TimeZone
        public var prices: PriceList
        /// `--currency`: adds the `*_converted` revenue columns in this currency.
        public var reportingCurrency: String?
        public var fxRates: FXRates?
        public var formats: Set<Format>
        /// `--out`; created when missing.
        public var outputDirectory: String
        /// `summary.json`'s `generated_by`, e.g. "subledger 0.1.0".
        public var generatedBy: String

        /// Settings with the CLI's defaults: as-of from the ledger, UTC, no price list, every format, `Reports/`.
        public init(asOf: Millis? = nil, timeZone: TimeZone = .gmt, prices: PriceList = .empty,
                    reportingCurrency: String? = nil, fxRates: FXRates? = nil, formats: Set<Format> = Set(Format.allCases),
                    outputDirectory: String = "Reports", generatedBy: String) {
            self.asOf = asOf
            self.timeZone = timeZone
            self.prices = prices
            self.reportingCurrency = reportingCurrency
            self.fxRates = fxRates
            self.formats = formats
            self.outputDirectory = outputDirectory
            self.generatedBy = generatedBy
        }
    }

    /// What a run produced.
    public struct Outcome: Sendable {
        public var tables: ReportTables
        public var asOf: Millis
        public var ingest: IngestStatistics
        /// The files written, in `outputDirectory`.
        public var files: [String]
    }

    public var settings: Settings
    /// Where the subscriptions done so far are shown while the tables are computed.
    public var progress: ProgressOutput

    /// A job writing the reports `settings` describes.
    public init(settings: Settings, progress: ProgressOutput = .none) {
        self.settings = settings
        self.progress = progress
    }

    /// Computes every table from `ledger` and writes the files; nothing is written unless all of them are.
    public func run(ledger: any LedgerStore) throws(ReportJobError) -> Outcome {
        let ingest: IngestStatistics
        let asOf: Millis
        let stale: Bool
        do throws(LedgerError) {
            stale = try ledger.standing(rulesVersion: RulesVersion.current).isStale(for: RulesVersion.current)
            ingest = try ledger.statistics()
        } catch {
            throw .ledger(error)
        }
        if stale { throw .stale(ledger.location) }
        // The default as-of is the latest statement: `statistics` has it already (`lastEventAt`, the latest
        // `observed_at`), so the facts are not scanned a second time for it.
        guard let resolved = settings.asOf ?? ingest.lastEventAt else { throw ReportJobError.emptyLedger }
        asOf = resolved
        let options = ReportOptions(asOf: asOf, timeZone: settings.timeZone, prices: settings.prices,
                                    reportingCurrency: settings.reportingCurrency, fxRates: settings.fxRates)
        var engine = MetricsEngine(options: options)
        let apple = AppleHistoryBuilder()
        let google = GoogleHistoryBuilder()
        var done = 0
        let line = ProgressLine(output: progress)
        let started = ContinuousClock.now
        defer { line.finish() }
        do {
            try ledger.forEachSubscription { platform, id, facts in
                switch platform {
                case .apple: engine.add(apple.history(id: id, facts: facts))
                case .google: engine.add(google.history(id: id, facts: facts))
                }
                done += 1
                if done % 1_000 == 0 { line.show(Self.figures(subscriptions: done, since: started)) }
            }
        } catch let error as LedgerError {
            throw .ledger(error)
        } catch {
            throw .ledger(LedgerError(kind: .corrupt, path: ledger.location, message: "the ledger could not be read to its end",
                                      detail: String(describing: error)))
        }
        line.done(Self.figures(subscriptions: done, since: started))
        let tables = engine.finish()
        let files = render(tables, ingest: ingest, asOf: asOf)
        do {
            try ReportWriter(directory: settings.outputDirectory).write(files)
        } catch {
            throw .write(error)
        }
        return Outcome(tables: tables, asOf: asOf, ingest: ingest, files: files.map(\.name))
    }

    /// Progress of the pass over the ledger: subscriptions done and their rate (the total is not known before
    /// the pass).
    static func figures(subscriptions: Int, since started: ContinuousClock.Instant) -> ProgressFigures {
        let rate = ProgressRate(since: started)
        var text = "report: \(subscriptions) subscriptions"
        var fields: [(key: String, value: String)] = [("command", "report"), ("subscriptions", String(subscriptions))]
        if let perSecond = rate.perSecond(subscriptions) {
            text += ", \(perSecond) subscriptions/s"
            fields.append(("subscriptions_per_second", String(perSecond)))
        }
        return ProgressFigures(text: text, fields: fields)
    }

    /// The contents of every requested file, in a fixed order.
    func render(_ tables: ReportTables, ingest: IngestStatistics, asOf: Millis) -> [(name: String, contents: String)] {
        var files: [(name: String, contents: String)] = []
        if settings.formats.contains(.csv) { files += CSVReport.files(tables) }
        if settings.formats.contains(.json) {
            files.append(("summary.json", SummaryJSON.render(tables, ingest: ingest, asOf: asOf, timeZone: settings.timeZone,
                                                             generatedBy: settings.generatedBy)))
        }
        if settings.formats.contains(.html) {
            files.append(("report.html", HTMLReport.render(tables, ingest: ingest, asOf: asOf, timeZone: settings.timeZone,
                                                           generatedBy: settings.generatedBy)))
        }
        return files
    }
}

/// Why a report could not be produced (exit 3 in the CLI, except ``emptyLedger`` and ``stale``, usage problems).
public enum ReportJobError: Error, Sendable, CustomStringConvertible {
    /// The ledger holds no facts and no `--as-of` was given.
    case emptyLedger
    /// The ledger's facts were made by other rules than this program's (or a reprocess is unfinished): reports
    /// would mix two rule versions (a usage problem: `subledger reprocess` fixes it).
    case stale(String)
    /// The ledger could not be read.
    case ledger(LedgerError)
    /// A report file could not be written; the previous reports were left as they were.
    case write(ReportWriteError)

    public var description: String {
        switch self {
        case .emptyLedger: "the ledger holds no data yet: run `subledger ingest` first, or give --as-of"
        case .stale(let location):
            "\(location): the ledger's facts were made by an earlier version of subledger's rules (or a reprocess was interrupted): run `subledger reprocess --db \(location)` with your verification options (or `subledger run`), then report again"
        case .ledger(let error): "could not read the ledger: \(error)"
        case .write(let error): "could not write the reports: \(error)"
        }
    }
}

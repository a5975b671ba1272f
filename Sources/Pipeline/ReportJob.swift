import AppStore
import Facts
import Foundation
import Ledger
import Metrics
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
        /// The as-of time (ms, UTC); `nil` means the latest time the ledger has a statement from a store, but
        /// never later than ``now``.
        public var asOf: Millis?
        /// The run's clock (ms, UTC): the default as-of is never later than this, whatever the ledger holds (a
        /// record dated in the year 5,441,567 once made `report` build a row per month up to it: 23 GB).
        public var now: Millis
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

        /// Settings with the CLI's defaults: as-of from the ledger, UTC, no price list, every format, `Reports/`,
        /// the clock read now.
        public init(asOf: Millis? = nil, now: Millis = Millis((Date().timeIntervalSince1970 * 1000).rounded()),
                    timeZone: TimeZone = .gmt, prices: PriceList = .empty,
                    reportingCurrency: String? = nil, fxRates: FXRates? = nil, formats: Set<Format> = Set(Format.allCases),
                    outputDirectory: String = "Reports", generatedBy: String) {
            self.asOf = asOf
            self.now = now
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
        /// The latest statement in the ledger when it lies after the run's clock (so the default as-of was cut
        /// back to the clock): a sign of records with impossible dates, for the CLI to say.
        public var futureStatementAt: Millis?
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
        var outcome = try compute(ledger: ledger)
        let files = render(outcome)
        do {
            try ReportWriter(directory: settings.outputDirectory).write(files)
        } catch {
            throw ReportJobError.write(error.description)
        }
        outcome.files = files.map(\.name)
        return outcome
    }

    /// Computes every table from `ledger`, writing nothing (``Outcome/files`` is empty).
    public func compute(ledger: any LedgerStore) throws(ReportJobError) -> Outcome {
        let ingest: IngestStatistics
        let asOf: Millis
        var futureStatementAt: Millis?
        do {
            ingest = try ledger.statistics()
            // The default as-of is the latest statement: `statistics` has it already (`lastEventAt`, the
            // latest `observed_at`), so the facts are not scanned a second time for it.
            guard let resolved = settings.asOf ?? ingest.lastEventAt.map({ min($0, settings.now) }) else {
                throw ReportJobError.emptyLedger
            }
            if settings.asOf == nil, let latest = ingest.lastEventAt, latest > settings.now { futureStatementAt = latest }
            asOf = resolved
        } catch let error as ReportJobError {
            throw error
        } catch {
            throw ReportJobError.ledger(String(describing: error))
        }
        let options = ReportOptions(asOf: asOf, timeZone: settings.timeZone, prices: settings.prices,
                                    reportingCurrency: settings.reportingCurrency, fxRates: settings.fxRates)
        var engine = MetricsEngine(options: options)
        let apple = AppleHistoryBuilder()
        let google = GoogleHistoryBuilder()
        var done = 0
        let line = ProgressLine(output: progress)
        defer { line.finish() }
        do {
            try ledger.forEachSubscription { platform, id, facts in
                switch platform {
                case .apple: engine.add(apple.history(id: id, facts: facts))
                case .google: engine.add(google.history(id: id, facts: facts))
                }
                done += 1
                if done % 1_000 == 0 { line.show("report: \(done) subscriptions") }
            }
        } catch {
            throw ReportJobError.ledger(String(describing: error))
        }
        return Outcome(tables: engine.finish(), asOf: asOf, futureStatementAt: futureStatementAt, ingest: ingest, files: [])
    }

    /// The contents of every requested file, in a fixed order.
    public func render(_ outcome: Outcome) -> [(name: String, contents: String)] {
        let (tables, ingest, asOf) = (outcome.tables, outcome.ingest, outcome.asOf)
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

/// Why a report could not be produced (exit 3 in the CLI, except ``emptyLedger``, a usage problem).
public enum ReportJobError: Error, Sendable, CustomStringConvertible {
    /// The ledger holds no facts and no `--as-of` was given.
    case emptyLedger
    /// The ledger could not be read.
    case ledger(String)
    /// A report file could not be written; the previous reports were left as they were.
    case write(String)

    public var description: String {
        switch self {
        case .emptyLedger: "the ledger holds no data yet: run `subledger ingest` first, or give --as-of"
        case .ledger(let message): "could not read the ledger: \(message)"
        case .write(let message): "could not write the reports: \(message)"
        }
    }
}

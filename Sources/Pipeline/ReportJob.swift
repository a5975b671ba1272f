import AppStore
import Facts
import Foundation
import Ingest
import Ledger
import SubscriptionMetrics
import PlayStore
import Reporting
import Synchronization

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
        /// How many slices of the subscriptions are computed at once, each on a thread and a connection of its
        /// own, then merged (``run(ledger:location:)``): the cores of the machine, at most eight.
        public var slices: Int

        /// Settings with the CLI's defaults: as-of from the ledger, UTC, no price list, every format, `Reports/`,
        /// the clock read now.
        public init(asOf: Millis? = nil, now: Millis = Millis((Date().timeIntervalSince1970 * 1000).rounded()),
                    timeZone: TimeZone = .gmt, prices: PriceList = .empty,
                    reportingCurrency: String? = nil, fxRates: FXRates? = nil, formats: Set<Format> = Set(Format.allCases),
                    outputDirectory: String = "Reports", generatedBy: String,
                    slices: Int = min(ProcessInfo.processInfo.activeProcessorCount, 8)) {
            self.slices = max(1, slices)
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

        public init(tables: ReportTables, asOf: Millis, futureStatementAt: Millis? = nil, ingest: IngestStatistics,
                    files: [String]) {
            self.tables = tables
            self.asOf = asOf
            self.futureStatementAt = futureStatementAt
            self.ingest = ingest
            self.files = files
        }
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
    /// With `location`, the subscriptions are read in ``Settings/slices`` slices at once, each slice on a thread
    /// and a connection of its own, and the slices' metrics merged: the same tables, sooner. With `location`
    /// the job also checks the ledger (``LedgerStore/quickCheck()``), beside the slices (``LedgerSideReads``);
    /// without, the caller has.
    public func run(ledger: any LedgerStore, location: LedgerLocation? = nil) throws(ReportJobError) -> Outcome {
        try write(try compute(ledger: ledger, location: location))
    }

    /// Computes every table from `ledger` (in slices, and checked, as ``run(ledger:location:)`` does), writing
    /// nothing (``Outcome/files`` is empty).
    public func compute(ledger: any LedgerStore, location: LedgerLocation? = nil) throws(ReportJobError) -> Outcome {
        guard let location else {
            let basis = try ReportBasis(ledger: ledger, settings: settings)
            return Outcome(basis: basis, engine: try foldWhole(ledger: ledger, options: basis.options))
        }
        // The check and the statistics, whole-ledger reads both, start first and go on beside the slices; only
        // the facts' event range (for the default as-of) is read before the slices, and not again beside them.
        let sideReads = LedgerSideReads(location: location, readingEventRange: settings.asOf != nil)
        let computed = Result { () throws(ReportJobError) -> (ReportBasis.Opening, MetricsEngine) in
            let opening = try ReportBasis.Opening(ledger: ledger, settings: settings) { () throws(LedgerError) in
                try ledger.eventRange()
            }
            let engine = settings.slices > 1
                ? try ReportSlices(location: location, options: opening.options, progress: progress)
                    .fold(slices: settings.slices)
                : try foldWhole(ledger: ledger, options: opening.options)
            return (opening, engine)
        }
        // Damage found anywhere comes first (exit 2 with how to recover, whatever else it caused), then anything
        // the check and the statistics met, so nothing is taken from a ledger that fails its check.
        switch (Result { () throws(ReportJobError) in try sideReads.finish() }, computed) {
        case (.failure(let side), .failure(let other)) where other.isDamage && !side.isDamage:
            throw other
        case (.failure(let side), _):
            throw side
        case (.success, .failure(let error)):
            throw error
        case (.success(var ingest), .success(let (opening, engine))):
            // The summary's event range is the one the as-of was taken from.
            if let range = opening.eventRange { (ingest.firstEventAt, ingest.lastEventAt) = range }
            return Outcome(basis: ReportBasis(opening: opening, ingest: ingest), engine: engine)
        }
    }

    /// Every subscription of `ledger` folded on this thread and connection.
    private func foldWhole(ledger: any LedgerStore, options: ReportOptions) throws(ReportJobError) -> MetricsEngine {
        let counter = SubscriptionCounter(output: progress)
        defer { counter.finish() }
        return try ReportSlices.fold(ledger: ledger, buckets: 0...LedgerBucket.count - 1, options: options,
                                     counter: counter)
    }

    /// Computes slice `shard` (1-based) of `shards` of the subscriptions (a range of buckets) and writes its
    /// mergeable state to `path`: what `report --shard K/N --partial FILE` does on any machine.
    /// The ledger is checked first (``LedgerStore/quickCheck()``), as a whole report checks it.
    public func runPartial(ledger: any LedgerStore, shard: Int, of shards: Int, to path: String) throws(ReportJobError) {
        try ReportBasis.reading { () throws(LedgerError) in try ledger.quickCheck() }
        let basis = try ReportBasis(ledger: ledger, settings: settings)
        let buckets = LedgerBucket.range(slice: shard, of: shards)
        let counter = SubscriptionCounter(output: progress)
        defer { counter.finish() }
        let engine = try ReportSlices.fold(ledger: ledger, buckets: buckets, options: basis.options, counter: counter)
        let partial = PartialState(engine: engine, context: basis.context(generatedBy: settings.generatedBy),
                                   coverage: [buckets.lowerBound..<buckets.upperBound + 1])
        do {
            let file = InputPath(path)
            try ReportWriter(directory: file.folder.description)
                .write(bytes: [(String(decoding: file.lastComponent, as: UTF8.self), partial.encoded())])
        } catch {
            throw ReportJobError.write(error)
        }
    }

    /// Merges the partial states at `paths` and writes the reports: byte-identical to an unsliced report of the
    /// same ledger and options. Refuses partials of other options, ledgers, rules or releases, overlapping
    /// slices, and a set that leaves buckets out.
    public func runMerge(partials paths: [String]) throws(ReportJobError) -> Outcome {
        var merged: PartialState?
        for path in paths {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ReportJobError.partial(path, "cannot be read")
            }
            do throws(PartialStateError) {
                let partial = try PartialState(decoding: [UInt8](data))
                if merged == nil { merged = partial } else { try merged?.merge(partial) }
            } catch {
                throw ReportJobError.partial(path, error.description)
            }
        }
        guard let merged else { throw ReportJobError.partial("--merge", "needs at least one partial-state file") }
        let missing = LedgerBucket.missing(from: merged.coverage)
        guard missing.isEmpty else {
            throw ReportJobError.partial(paths.joined(separator: ", "), """
                leave buckets \(missing.map { "\($0.lowerBound)..<\($0.upperBound)" }.joined(separator: ", ")) out: \
                merge the partials of every slice
                """)
        }
        // The options given now must be those the slices were computed with (the as-of, when not given, is
        // theirs): merging into an engine of these options says which one differs.
        let sliced = merged.engine.options
        let options = ReportOptions(asOf: settings.asOf ?? sliced.asOf, timeZone: settings.timeZone,
                                    prices: settings.prices, reportingCurrency: settings.reportingCurrency,
                                    fxRates: settings.fxRates)
        var engine = MetricsEngine(options: options)
        do throws(MetricsMergeError) {
            try engine.merge(merged.engine)
        } catch {
            throw ReportJobError.partial(paths.joined(separator: ", "), "were \(error.description)")
        }
        guard let ingest = merged.context["ingest"].flatMap(IngestStatistics.init(json:)) else {
            throw ReportJobError.partial(paths.joined(separator: ", "), "carry no ingest statistics: compute the slices again")
        }
        return try write(Outcome(tables: engine.finish(), asOf: options.asOf, ingest: ingest, files: []))
    }

    /// Renders and writes the tables; nothing is written unless every file is.
    private func write(_ computed: Outcome) throws(ReportJobError) -> Outcome {
        var outcome = computed
        let files = render(outcome)
        do {
            try ReportWriter(directory: settings.outputDirectory).write(files)
        } catch {
            throw .write(error)
        }
        outcome.files = files.map(\.name)
        return outcome
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

    /// The contents of every requested file, in a fixed order (CSV files, `summary.json`, `report.html`).
    ///
    /// The formats are rendered at once, each on a core: they share nothing but the finished tables, and they
    /// run after every slice has folded, so on one thread they were the report's serial tail (0.76 s of CPU in
    /// the bench report, the page 0.5 s of it).
    public func render(_ outcome: Outcome) -> [(name: String, contents: String)] {
        let (tables, ingest, asOf) = (outcome.tables, outcome.ingest, outcome.asOf)
        let (timeZone, generatedBy) = (settings.timeZone, settings.generatedBy)
        let renderers: [@Sendable () -> [(name: String, contents: String)]] = Format.allCases.filter(settings.formats.contains).map { format in
            switch format {
            case .csv: { CSVReport.files(tables) }
            case .json: { [("summary.json", SummaryJSON.render(tables, ingest: ingest, asOf: asOf, timeZone: timeZone, generatedBy: generatedBy))] }
            case .html: { [("report.html", HTMLReport.render(tables, ingest: ingest, asOf: asOf, timeZone: timeZone, generatedBy: generatedBy))] }
            }
        }
        let rendered = Mutex([[(name: String, contents: String)]](repeating: [], count: renderers.count))
        DispatchQueue.concurrentPerform(iterations: renderers.count) { index in
            let files = renderers[index]()
            rendered.withLock { $0[index] = files }
        }
        return rendered.withLock { $0.flatMap { $0 } }
    }
}

/// Why a report could not be produced (exit 3 in the CLI, except ``emptyLedger``, ``stale`` and ``partial``, usage
/// problems).
public enum ReportJobError: Error, Sendable, CustomStringConvertible {
    /// The ledger holds no facts and no `--as-of` was given.
    case emptyLedger
    /// The ledger's facts were made by other rules than this program's (or a reprocess is unfinished): reports
    /// would mix two rule versions (a usage problem: `subledger reprocess` fixes it).
    case stale(String)
    /// The ledger could not be read.
    case ledger(LedgerError)
    /// A partial-state file (or a set of them) cannot be merged, and why (a usage problem).
    case partial(String, String)
    /// A report file could not be written; the previous reports were left as they were.
    case write(ReportWriteError)

    /// The ledger was found damaged (exit 2, with how to recover).
    var isDamage: Bool {
        if case .ledger(let error) = self { return error.kind == .damaged }
        return false
    }

    public var description: String {
        switch self {
        case .emptyLedger: "the ledger holds no data yet: run `subledger ingest` first, or give --as-of"
        case .stale(let location):
            "\(location): the ledger's facts were made by an earlier version of subledger's rules (or a reprocess was interrupted): run `subledger reprocess --db \(location)` with your verification options (or `subledger run`), then report again"
        case .ledger(let error): "could not read the ledger: \(error)"
        case .partial(let file, let reason): "--merge: \(file) \(reason)"
        case .write(let error): "could not write the reports: \(error)"
        }
    }
}

extension ReportJob.Outcome {
    /// The tables `engine` folded, on `basis`; no file written yet.
    init(basis: ReportBasis, engine: MetricsEngine) {
        self.init(tables: engine.finish(), asOf: basis.options.asOf, futureStatementAt: basis.futureStatementAt,
                  ingest: basis.ingest, files: [])
    }
}

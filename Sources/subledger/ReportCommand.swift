import ArgumentParser
import Facts
import Foundation
import Ingest
import SubscriptionMetrics
import Ledger
import Pipeline

struct ReportCommand: LoggingCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Compute every metric from the ledger and write the reports.",
        discussion: """
        Writes subscriptions_monthly.csv, revenue_monthly.csv, mrr_movements.csv, retention_cohorts.csv, \
        trial_conversion.csv, grace_recovery.csv, summary.json and report.html into --out, then a summary of \
        the last complete month on stdout. What makes the figures understate (transactions with no price: \
        pass --prices; months without an FX rate) is a warning on stderr and in summary.json's warnings. The \
        same ledger and options always give byte-identical CSV and JSON files (but summary.json's \
        generated_by). Exit 2 when the ledger needs `subledger reprocess` first. The subscriptions are read in \
        slices on all cores at once (--slices); --shard K/N --partial FILE computes one slice anywhere (many \
        machines on one PostgreSQL ledger), and --merge FILE... writes the reports from every slice's file, \
        byte-identical to a report in one go.

        Examples:
          subledger report --db ledger.sqlite --out Reports --prices prices.csv
          subledger report --db ledger.sqlite --as-of 2024-04-30 \\
            --timezone Asia/Tokyo --currency USD --fx-rates fx.csv
          subledger report --db postgres://reports@db/ledger --shard 2/4 \\
            --partial part-2 --prices prices.csv
          subledger report --merge part-1 part-2 part-3 part-4 \\
            --prices prices.csv --out Reports
        """
    )

    @OptionGroup var ledger: LedgerOptions
    @OptionGroup var report: ReportArguments
    @OptionGroup var output: OutputOptions

    @Option(help: ArgumentHelp("Compute only slice K of N of the subscriptions (e.g. 2/4) into --partial; run the N slices anywhere, then --merge.",
                               valueName: "K/N"))
    var shard: String?

    @Option(help: ArgumentHelp("Where --shard writes the slice's mergeable state.", valueName: "FILE"))
    var partial: String?

    @Option(parsing: .upToNextOption,
            help: ArgumentHelp("Write the reports from these partial-state files (every slice of one report) instead of the ledger.",
                               valueName: "FILE"))
    var merge: [String] = []

    func validate() throws {
        if shard != nil, partial == nil { throw ValidationError("--shard K/N needs --partial FILE (where the slice's state goes)") }
        if partial != nil, shard == nil { throw ValidationError("--partial FILE needs --shard K/N (which slice to compute)") }
        var isDirectory: ObjCBool = false
        if let partial, FileManager.default.fileExists(atPath: partial, isDirectory: &isDirectory), isDirectory.boolValue {
            throw ValidationError("--partial \(partial) is a folder: give the slice's file, e.g. \(partial)/part-1")
        }
        if !merge.isEmpty, shard != nil { throw ValidationError("--merge combines slices already computed: give it without --shard") }
        if let shard, Self.slice(shard) == nil {
            throw ValidationError("--shard '\(shard)' is not K/N with 1 <= K <= N <= \(LedgerBucket.count), e.g. 2/4")
        }
    }

    func run() throws {
        let job = try report.makeJob(progress: progress)
        let outcome: ReportJob.Outcome
        if !merge.isEmpty {
            outcome = try job.reporting { () throws(ReportJobError) in try job.runMerge(partials: merge) }
        } else if let shard, let partial, let (k, n) = Self.slice(shard) {
            // The job checks the ledger first.
            let store = try ledger.openForReading()
            try job.reporting { () throws(ReportJobError) in try job.runPartial(ledger: store, shard: k, of: n, to: partial) }
            let buckets = LedgerBucket.range(slice: k, of: n)
            print("slice \(k)/\(n) (buckets \(buckets.lowerBound)-\(buckets.upperBound)) written to \(partial); " +
                  "merge every slice with `subledger report --merge`")
            return
        } else {
            // The job checks the ledger itself, beside the slices.
            let store = try ledger.openForReading()
            outcome = try job.reporting { () throws(ReportJobError) in try job.run(ledger: store, location: ledger.location) }
        }
        outcome.warnAboutGaps(logger: logger, pricesGiven: report.prices != nil)
        print(outcome.summaryText(timeZone: try report.timeZoneValue(), zoneName: report.timezone, directory: report.out))
    }

    /// `K/N` as numbers, when 1 <= K <= N <= the number of buckets.
    static func slice(_ text: String) -> (Int, Int)? {
        let parts = text.split(separator: "/")
        guard parts.count == 2, let k = Int(parts[0]), let n = Int(parts[1]), 1 <= k, k <= n, n <= LedgerBucket.count else {
            return nil
        }
        return (k, n)
    }
}

/// The options of `report`, shared with `run`.
struct ReportArguments: ParsableArguments {
    @Option(help: ArgumentHelp("Where the reports are written (created when missing).", valueName: "DIR"))
    var out = "Reports"

    @Option(name: .customLong("as-of"),
            help: ArgumentHelp("Cut everything at this instant: RFC 3339, a date YYYY-MM-DD (the end of that day in --timezone) or epoch milliseconds. Default: the latest time a store said anything in the ledger.", valueName: "TIME"))
    var asOf: String?

    @Option(help: ArgumentHelp("IANA time zone whose calendar months the reports use.", valueName: "TZ"))
    var timezone = "UTC"

    @Option(help: ArgumentHelp("Price list CSV: platform,product_id,currency,price,duration. Supplies prices the payloads lack and product durations.", valueName: "FILE"))
    var prices: String?

    @Option(help: ArgumentHelp("Add *_converted revenue and MRR columns in this ISO 4217 currency (needs --fx-rates); report.html then totals in it.", valueName: "X"))
    var currency: String?

    @Option(name: .customLong("fx-rates"), help: ArgumentHelp("FX rates CSV: month,currency,rate_to_reporting_currency.", valueName: "FILE"))
    var fxRates: String?

    @Option(help: ArgumentHelp("Comma-separated output formats: csv, json, html.", valueName: "LIST"))
    var format = "csv,json,html"

    @Option(help: ArgumentHelp("Slices of the subscriptions computed at once (default: the cores, at most 8).",
                               valueName: "N"))
    var slices: Int?

    func validate() throws {
        if currency != nil, fxRates == nil { throw ValidationError("--currency needs --fx-rates FILE (the rates to convert with)") }
        if fxRates != nil, currency == nil { throw ValidationError("--fx-rates needs --currency X (the reporting currency)") }
        if let currency, !Locale.Currency.isoCurrencies.contains(where: { $0.identifier == currency.uppercased() }) {
            throw ValidationError("--currency \(currency) is not an ISO 4217 currency code: give three letters such as USD, EUR or JPY")
        }
        do {
            _ = try formats()
            _ = try timeZoneValue()
            _ = try asOfValue()
        } catch let failure as CommandFailure {
            // Thrown from validate(), only a ValidationError becomes a usage error (exit 2) with its message.
            throw ValidationError(failure.message)
        }
    }

    func timeZoneValue() throws -> TimeZone {
        // Foundation also reads `GMT+5` or `UTC+3` as a fixed offset east of UTC; IANA's `Etc/GMT+5` is 5 hours
        // west. Taking one would put every instant in the wrong month by its sign; only the zero offsets (`GMT+0`,
        // `GMT-0`, IANA names too) read the same either way.
        let offsetPrefixes = ["GMT+", "GMT-", "UTC+", "UTC-"]
        let signedOffset = offsetPrefixes.contains { prefix in
            timezone.uppercased().hasPrefix(prefix) && !timezone.dropFirst(prefix.count).allSatisfy { $0 == "0" }
        }
        guard !signedOffset, let zone = TimeZone(identifier: timezone) else {
            throw CommandFailure.usage("unknown time zone '\(timezone)': give an IANA name such as UTC, Asia/Tokyo or Etc/GMT-5 (5 hours east of UTC)")
        }
        return zone
    }

    /// `--as-of` in ms UTC: RFC 3339, a date `YYYY-MM-DD` (the end of that day in `--timezone`, cli.md), or epoch
    /// milliseconds.
    func asOfValue() throws -> Millis? {
        guard let asOf else { return nil }
        if let millis = Int64(asOf) {
            // RFC 3339's years, 0001 to 9999: a larger number is a typo, and a report up to it would not fit in memory.
            guard (-62_135_596_800_000...253_402_300_799_999).contains(millis) else {
                throw CommandFailure.usage("--as-of \(asOf) lies outside the years 0001 to 9999; give epoch milliseconds or RFC 3339")
            }
            return millis
        }
        if let millis = RFC3339.millis(asOf) { return millis }
        if let millis = try Self.endOfDay(asOf, in: timeZoneValue()) { return millis }
        throw CommandFailure.usage("""
            --as-of '\(asOf)' is not an RFC 3339 time (2024-04-30T23:59:59.999Z), a date (2024-04-30: the end of \
            that day in --timezone) or epoch milliseconds
            """)
    }

    /// The last millisecond of the calendar day `YYYY-MM-DD` in `zone` (the instant before the next day
    /// starts there, DST days included); `nil` when `text` is no such date.
    static func endOfDay(_ text: String, in zone: TimeZone) -> Millis? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        guard let start = calendar.date(from: DateComponents(year: year, month: month, day: day)),
              calendar.dateComponents([.year, .month, .day], from: start) == DateComponents(year: year, month: month, day: day),
              let next = calendar.date(byAdding: .day, value: 1, to: calendar.startOfDay(for: start)) else { return nil }
        return Millis((next.timeIntervalSince1970 * 1000).rounded()) - 1
    }

    func formats() throws -> Set<ReportJob.Format> {
        var result: Set<ReportJob.Format> = []
        for name in format.split(separator: ",") {
            let trimmed = name.trimmingCharacters(in: .whitespaces).lowercased()
            guard let value = ReportJob.Format(rawValue: trimmed) else {
                throw CommandFailure.usage("--format '\(name)' is not one of csv, json, html")
            }
            result.insert(value)
        }
        guard !result.isEmpty else { throw CommandFailure.usage("--format needs at least one of csv, json, html") }
        return result
    }

    /// Reads the configuration files and builds the job; a bad file is a usage error (exit 2) naming the line.
    func makeJob(progress: ProgressOutput) throws -> ReportJob {
        let priceList = try prices.map { path in
            do { return try PriceList(csv: readConfiguration(path, what: "price list")) } catch let error as ConfigurationError {
                throw CommandFailure.usage("--prices \(path): \(error)")
            }
        } ?? .empty
        let rates = try fxRates.map { path in
            do {
                return try FXRates(csv: readConfiguration(path, what: "FX rates"), reportingCurrency: currency)
            } catch let error as ConfigurationError {
                throw CommandFailure.usage("--fx-rates \(path): \(error)")
            }
        }
        let settings = ReportJob.Settings(asOf: try asOfValue(), timeZone: try timeZoneValue(), prices: priceList,
                                          reportingCurrency: currency?.uppercased(), fxRates: rates,
                                          formats: try formats(), outputDirectory: out,
                                          generatedBy: "subledger \(Subledger.version)",
                                          slices: slices ?? min(ProcessInfo.processInfo.activeProcessorCount, 8))
        return ReportJob(settings: settings, progress: progress)
    }

    private func readConfiguration(_ path: String, what: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandFailure.usage("cannot read the \(what) '\(path)': no such readable file")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw CommandFailure.usage("the \(what) '\(path)' is not UTF-8 text")
        }
        return text
    }
}

extension ReportJob {
    /// Runs `work`, turning its errors into the CLI's exit codes.
    func reporting<T>(_ work: () throws(ReportJobError) -> T) throws -> T {
        do {
            return try work()
        } catch {
            throw CommandFailure.report(error)
        }
    }
}

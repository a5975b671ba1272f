import ArgumentParser
import Facts
import Foundation
import Ingest
import Metrics
import Ledger
import Pipeline

struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Compute every metric from the ledger and write the reports.",
        discussion: """
        Writes subscriptions_monthly.csv, revenue_monthly.csv, retention_cohorts.csv, trial_conversion.csv, \
        grace_recovery.csv, summary.json and report.html into --out. The same ledger and options always give \
        byte-identical CSV and JSON files (but summary.json's generated_by).

        Examples:
          subledger report --db ledger.sqlite --out Reports --prices prices.csv
          subledger report --as-of 2024-04-30T23:59:59.999Z --timezone Asia/Tokyo --currency USD --fx-rates fx.csv
        """
    )

    @OptionGroup var ledger: LedgerOptions
    @OptionGroup var report: ReportArguments

    func run() throws {
        let store = try ledger.openForReading(checked: true)
        let outcome = try report.makeJob().runReporting(ledger: store)
        outcome.warnAboutGaps()
        print(outcome.summaryText(timeZone: try report.timeZoneValue(), zoneName: report.timezone, directory: report.out))
    }
}

/// The options of `report`, shared with `run`.
struct ReportArguments: ParsableArguments {
    @Option(help: ArgumentHelp("Where the reports are written (created when missing).", valueName: "DIR"))
    var out = "Reports"

    @Option(name: .customLong("as-of"),
            help: ArgumentHelp("Cut everything at this instant (RFC 3339, or epoch milliseconds). Default: the latest time a store said anything in the ledger.", valueName: "TIME"))
    var asOf: String?

    @Option(help: ArgumentHelp("IANA time zone whose calendar months the reports use.", valueName: "TZ"))
    var timezone = "UTC"

    @Option(help: ArgumentHelp("Price list CSV: platform,product_id,currency,price,duration. Supplies prices the payloads lack and product durations.", valueName: "FILE"))
    var prices: String?

    @Option(help: ArgumentHelp("Add *_converted revenue columns in this currency (needs --fx-rates).", valueName: "X"))
    var currency: String?

    @Option(name: .customLong("fx-rates"), help: ArgumentHelp("FX rates CSV: month,currency,rate_to_reporting_currency.", valueName: "FILE"))
    var fxRates: String?

    @Option(help: ArgumentHelp("Comma-separated output formats: csv, json, html.", valueName: "LIST"))
    var format = "csv,json,html"

    func validate() throws {
        if currency != nil, fxRates == nil { throw ValidationError("--currency needs --fx-rates FILE (the rates to convert with)") }
        if fxRates != nil, currency == nil { throw ValidationError("--fx-rates needs --currency X (the reporting currency)") }
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
        guard let zone = TimeZone(identifier: timezone) else {
            throw CommandFailure.usage("unknown time zone '\(timezone)': give an IANA name such as UTC or Asia/Tokyo")
        }
        return zone
    }

    func asOfValue() throws -> Millis? {
        guard let asOf else { return nil }
        if let millis = Int64(asOf) {
            // RFC 3339's years, 0001 to 9999: a larger number is a typo, and a report up to it would not fit in memory.
            guard (-62_135_596_800_000...253_402_300_799_999).contains(millis) else {
                throw CommandFailure.usage("--as-of \(asOf) lies outside the years 0001 to 9999; give epoch milliseconds or RFC 3339")
            }
            return millis
        }
        guard let millis = RFC3339.millis(asOf) else {
            throw CommandFailure.usage("--as-of '\(asOf)' is not an RFC 3339 time (2024-04-30T23:59:59.999Z) or epoch milliseconds")
        }
        return millis
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
    func makeJob() throws -> ReportJob {
        let priceList = try prices.map { path in
            do { return try PriceList(csv: readConfiguration(path, what: "price list")) } catch let error as ConfigurationError {
                throw CommandFailure.usage("--prices \(path): \(error)")
            }
        } ?? .empty
        let rates = try fxRates.map { path in
            do { return try FXRates(csv: readConfiguration(path, what: "FX rates")) } catch let error as ConfigurationError {
                throw CommandFailure.usage("--fx-rates \(path): \(error)")
            }
        }
        let settings = ReportJob.Settings(asOf: try asOfValue(), timeZone: try timeZoneValue(), prices: priceList,
                                          reportingCurrency: currency?.uppercased(), fxRates: rates,
                                          formats: try formats(), outputDirectory: out,
                                          generatedBy: "subledger \(Subledger.version)")
        return ReportJob(settings: settings, progress: .standardError)
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
    /// Runs the job, turning its errors into the CLI's exit codes.
    func runReporting(ledger: any LedgerStore) throws -> ReportJob.Outcome {
        do {
            return try run(ledger: ledger)
        } catch .emptyLedger {
            throw CommandFailure.usage(ReportJobError.emptyLedger.description)
        } catch {
            throw CommandFailure.couldNotFinish(error.description)
        }
    }
}

import Facts
import Foundation
import Metrics
import Pipeline

extension ReportJob.Outcome {
    /// What `report` and `run` print on stdout: where the files are and the last complete month's headline.
    func summaryText(timeZone: TimeZone, zoneName: String, directory: String) -> String {
        var lines = ["reports written to \(directory)/: " + files.joined(separator: ", ")]
        let asOfText = Timestamp.rfc3339(asOf)
        guard let headline = tables.headline(asOf: asOf, timeZone: timeZone) else {
            lines.append("as of \(asOfText) (\(zoneName)): no complete month yet")
            return lines.joined(separator: "\n")
        }
        let total = headline.subscriptions
        let platforms = headline.byPlatform.map { "\($0.platform) \($0.activeEnd)" }.joined(separator: ", ")
        lines.append("as of \(asOfText) (\(zoneName)); last complete month \(headline.month):")
        lines.append("  active subscriptions at month end: \(total.activeEnd) (\(platforms))")
        lines.append("  churned: \(total.churned) of \(total.activeStart) active at the start; churn rate \(rate(total.churnRate)), net churn rate \(rate(total.netChurnRate))")
        let grace = headline.grace.map {
            "\($0.platform) \(rate($0.recoveryRate)) (\($0.recoveryRate.numerator) of \($0.recoveryRate.denominator))"
        }
        lines.append("  billing-issue recovery rate, episodes started this month: " + (grace.isEmpty ? "none" : grace.joined(separator: ", ")))
        let trials = headline.trials.map {
            "\($0.platform) \($0.productId) \(rate($0.conversionRate)) (\($0.conversionRate.numerator) of \($0.conversionRate.denominator))"
        }
        lines.append("  trial conversion, trials started this month: " + (trials.isEmpty ? "none" : trials.joined(separator: ", ")))
        if !headline.mrrByCurrency.isEmpty {
            lines.append("  MRR: " + headline.mrrByCurrency.map { "\($0.amount.text) \($0.currency)" }.joined(separator: ", "))
        }
        return lines.joined(separator: "\n")
    }

    /// Prints, on stderr, what the reports could not do and how to fix it (missing FX rates, statements dated
    /// after the run's clock).
    func warnAboutGaps() {
        if let futureStatementAt {
            FileHandle.standardError.write(Data("""
                report: the ledger holds statements dated after now (the latest at \(Timestamp.rfc3339(futureStatementAt))); \
                the reports are as of now (\(Timestamp.rfc3339(asOf))): give --as-of to choose another time

                """.utf8))
        }
        let missing = tables.missingExchangeRates
        guard !missing.isEmpty else { return }
        let shown = missing.prefix(12).joined(separator: ", ") + (missing.count > 12 ? ", ..." : "")
        FileHandle.standardError.write(Data("""
            report: no FX rate for \(missing.count) month and currency pair(s) (\(shown)); their *_converted cells are \
            empty: add rows `month,currency,rate_to_reporting_currency` for them to the --fx-rates file

            """.utf8))
    }

    private func rate(_ ratio: Ratio) -> String {
        ratio.cell.text.isEmpty ? "n/a" : ratio.cell.text
    }
}

import Facts
import Foundation
import SubscriptionMetrics

/// The headline figures of the last complete month (`ReportTables.lastCompleteMonth`, the month the `run`
/// summary names too).
///
/// Only CSV cells are shown (rates per platform and per product, as the CSV has them), plus MRR, ARR (12 × MRR)
/// and net new MRR (mrr_end − mrr_start of mrr_movements) per currency as exact sums of their rows; no figure here
/// is a ratio recomputed from sums.
struct HTMLHeadline: Sendable {
    let sections: HTMLSections
    /// `YYYY-MM`.
    let month: String

    init(_ sections: HTMLSections, asOf: Millis, timeZone: TimeZone) {
        self.sections = sections
        month = ReportTables.lastCompleteMonth(asOf: asOf, timeZone: timeZone)
    }

    func html() -> String {
        let subscriptions = sections.subscriptions
        guard let total = subscriptions.filter(["month": month, "platform": "all", "product_id": "all"]).first else {
            return "<section class=\"headline\" id=\"headline\"><h2>Last complete month</h2><p class=\"no-data\">No complete month:"
                + " the reports have no rows for " + HTMLText.escape(month) + ", the last month over by the as-of time.</p></section>"
        }
        var out = "<section class=\"headline\" id=\"headline\" data-month=\"\(HTMLText.escape(month))\"><h2>"
            + HTMLText.escape("Last complete month: " + month) + "</h2><dl>"
        out += figure("Active subscriptions at month end", [("", subscriptions.text(total, "active_end"), subscriptions.source(total, "active_end"))])
        let revenue = sections.revenue
        let currencies = revenue.distinct("currency", in: revenue.filter(["month": month])).filter { !$0.isEmpty }
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let movementCurrencies = sections.mrr.distinct("currency", in: sections.mrr.filter(["month": month]))
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        out += figure("MRR at month end", perCurrency(revenue, currencies) + inReportingCurrency())
        out += figure("ARR (12 × MRR)", perCurrency(revenue, currencies, times: 12) + inReportingCurrency(times: 12))
        out += figure("Net new MRR (end − start)", perCurrency(sections.mrr, movementCurrencies, minus: "mrr_start")
                      + inReportingCurrency(minus: "mrr_start_converted"))
        out += figure("Churn rate", [("", subscriptions.text(total, "churn_rate"), subscriptions.source(total, "churn_rate"))])
        out += figure("Net churn rate", [("", subscriptions.text(total, "net_churn_rate"), subscriptions.source(total, "net_churn_rate"))])
        let grace = sections.grace
        out += figure("Billing-issue recovery rate", grace.filter(["month": month]).map {
            (grace.text($0, "platform"), grace.text($0, "recovery_rate"), grace.source($0, "recovery_rate"))
        })
        let trials = sections.trials
        out += figure("Trial conversion (trials started this month)", trials.filter(["cohort_month": month]).map {
            (trials.text($0, "platform") + " " + trials.text($0, "product_id"), trials.text($0, "conversion_rate"),
             trials.source($0, "conversion_rate"))
        })
        return out + "</dl><p class=\"note\">Rates are fractions of 1 with six decimals, as in the CSV files; an empty rate"
            + " (shown as —) has a zero denominator.</p></section>"
    }

    /// `times` × Σ (`mrr_end` − `minus`) over `table`'s rows of the month, per currency.
    private func perCurrency(_ table: HTMLRows, _ currencies: [String], minus: String? = nil,
                             times: Int? = nil) -> [(label: String, text: String, source: HTMLSource)] {
        currencies.compactMap { currency in
            total(table, table.filter(["month": month, "currency": currency]), "mrr_end", minus: minus, times: times,
                  key: [("month", month), ("currency", currency)]).map { (currency, $0.text, $0.source) }
        }
    }

    /// With `--currency`: the same over every currency, from mrr_movements' converted amounts; nothing when a
    /// rate of the month is missing.
    private func inReportingCurrency(minus: String? = nil, times: Int? = nil) -> [(label: String, text: String, source: HTMLSource)] {
        let rows = sections.mrr.filter(["month": month])
        guard let reporting = sections.reportingCurrency, !rows.isEmpty,
              let value = total(sections.mrr, rows, "mrr_end_converted", minus: minus, times: times, key: [("month", month)])
        else { return [] }
        return [("all in " + reporting, value.text, value.source)]
    }

    private func total(_ table: HTMLRows, _ rows: [[String]], _ column: String, minus: String?, times: Int?,
                       key: [(column: String, value: String)]) -> (text: String, source: HTMLSource)? {
        HTMLDecimal.sum(rows.map { table.text($0, column) }, minus: minus.map { less in rows.map { table.text($0, less) } } ?? [],
                        times: Int64(times ?? 1), places: 2)
            .map { ($0, .sum(table.name, where: key, column, minus: minus, times: times)) }
    }

    /// A `<dt>` and its values; each value is labelled (currency, platform) when there are several.
    private func figure(_ name: String, _ values: [(label: String, text: String, source: HTMLSource)]) -> String {
        var out = "<div class=\"figure\"><dt>" + HTMLText.escape(name) + "</dt>"
        if values.isEmpty { return out + "<dd class=\"none\">none this month</dd></div>" }
        for value in values {
            out += "<dd>" + (value.label.isEmpty ? "" : "<span class=\"what\">" + HTMLText.escape(value.label) + "</span> ")
                + "<span class=\"value\"\(value.source.attributes)>" + HTMLText.escape(value.text) + "</span></dd>"
        }
        return out + "</div>"
    }
}

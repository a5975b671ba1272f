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
        // The churn rate with the two numbers it is made of: "5 of the 87 active at the start", never `churned` (6),
        // which also counts spells that started in the month (metrics.md: one definition per figure).
        var churnNote = ""
        if case .value(let count, let source) = sections.churnedFromStartCell(total) {
            churnNote = "<span class=\"value\"\(source.attributes)>\(count)</span> of the " + tagged(subscriptions, total, "active_start")
                + " active at the start ended; " + tagged(subscriptions, total, "churned") + " paid spells ended in all"
        }
        out += figure("Churn rate", [("", subscriptions.percentText(total, "churn_rate"), subscriptions.source(total, "churn_rate").percent,
                                      churnNote)])
        out += figure("Net churn rate", [("", subscriptions.percentText(total, "net_churn_rate"),
                                          subscriptions.source(total, "net_churn_rate").percent,
                                          "(" + tagged(subscriptions, total, "churned") + " churned − " + tagged(subscriptions, total, "reactivated")
                                              + " reactivated) / " + tagged(subscriptions, total, "active_start"))])
        let grace = sections.grace
        // Episodes still open are not in the rate yet: the rate is provisional while any is.
        out += figure("Billing-issue recovery rate (episodes started this month)", grace.filter(["month": month]).map { row in
            let open: Bool = grace.text(row, "open") != "0"
            let note: String = tagged(grace, row, "lost") + " lost, " + tagged(grace, row, "open") + " still open"
                + (open ? ": <strong>provisional</strong>" : "")
            return (grace.text(row, "platform"), grace.percentText(row, "recovery_rate"), grace.source(row, "recovery_rate").percent, note)
        })
        let trials = sections.trials
        out += figure("Trial conversion (trials started this month)", trials.filter(["cohort_month": month]).map { row in
            let label: String = trials.text(row, "platform") + " " + trials.text(row, "product_id")
            let counts: [String] = [tagged(trials, row, "converted") + " converted", tagged(trials, row, "abandoned") + " abandoned",
                                    tagged(trials, row, "pending") + " pending"]
            return (label, trials.percentText(row, "conversion_rate"), trials.source(row, "conversion_rate").percent,
                    counts.joined(separator: ", "))
        })
        return out + "</dl><p class=\"note\">Rates are percentages of their CSV cells (fractions of 1 with six decimals),"
            + " rounded to a tenth; an empty rate (shown as —) has a zero denominator.</p></section>"
    }

    /// `column` of `row` as an inline figure tagged with its CSV cell.
    private func tagged(_ table: HTMLRows, _ row: [String], _ column: String) -> String {
        "<span class=\"value\"" + table.source(row, column).attributes + ">" + HTMLText.escape(table.text(row, column)) + "</span>"
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
        figure(name, values.map { ($0.label, $0.text, $0.source, "") })
    }

    /// A `<dt>` and its values, each with an optional note under it (HTML, already escaped: what the figure is
    /// made of).
    private func figure(_ name: String, _ values: [(label: String, text: String, source: HTMLSource, note: String)]) -> String {
        var out = "<div class=\"figure\"><dt>" + HTMLText.escape(name) + "</dt>"
        if values.isEmpty { return out + "<dd class=\"none\">none this month</dd></div>" }
        for value in values {
            out += "<dd>" + (value.label.isEmpty ? "" : "<span class=\"what\">" + HTMLText.escape(value.label) + "</span> ")
                + "<span class=\"value\"\(value.source.attributes)>" + HTMLText.escape(value.text) + "</span>"
                + (value.note.isEmpty ? "" : "<span class=\"made-of\">" + value.note + "</span>") + "</dd>"
        }
        return out + "</div>"
    }
}

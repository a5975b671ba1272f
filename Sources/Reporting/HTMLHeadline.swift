import Facts
import Foundation
import SubscriptionMetrics

/// The headline figures of the last complete month (`ReportTables.lastCompleteMonth`, the month the `run`
/// summary names too).
///
/// Only CSV cells are shown (rates per platform and per product, as the CSV has them), plus MRR per currency as
/// the exact sum of its rows; no figure here is a ratio recomputed from sums.
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
        out += figure("MRR at month end", currencies.compactMap { currency in
            HTMLDecimal.sum(revenue.filter(["month": month, "currency": currency]).map { revenue.text($0, "mrr_end") }, places: 2).map {
                (currency, $0, HTMLSource.sum(revenue.name, where: [("month", month), ("currency", currency)], "mrr_end"))
            }
        })
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

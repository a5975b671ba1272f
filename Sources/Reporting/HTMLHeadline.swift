import Facts
import Foundation

/// The headline figures of the last complete month: the latest calendar month of the reporting time zone that is
/// over by the as-of time. The as-of time is inclusive (events at it count), so a month is complete when its last
/// millisecond is at or before it: an as-of of 2024-04-30T23:59:59.999Z completes April in UTC. This is the
/// month `Headline` on main (the `run` summary) picks, so the page and the terminal name the same month.
///
/// Only CSV cells are shown (rates per platform and per product, as the CSV has them), plus MRR per currency as
/// the exact sum of its rows; no figure here is a ratio recomputed from sums.
struct HTMLHeadline: Sendable {
    let sections: HTMLSections
    /// `YYYY-MM`.
    let month: String

    init(_ sections: HTMLSections, asOf: Millis, timeZone: TimeZone) {
        self.sections = sections
        month = Self.lastCompleteMonth(asOf: asOf, timeZone: timeZone)
    }

    /// `YYYY-MM` of the month before the one holding `asOf + 1 ms` (ms UTC) in `timeZone`.
    static func lastCompleteMonth(asOf: Millis, timeZone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let next = asOf == Millis.max ? asOf : asOf + 1
        let parts = calendar.dateComponents([.year, .month], from: Date(timeIntervalSince1970: Double(next) / 1000))
        let index = (parts.year ?? 1970) * 12 + (parts.month ?? 1) - 2
        let year = index >= 0 ? index / 12 : (index - 11) / 12
        let monthOfYear = index - year * 12 + 1
        let yearText = String(year)
        return String(repeating: "0", count: max(0, 4 - yearText.count)) + yearText + (monthOfYear < 10 ? "-0" : "-") + String(monthOfYear)
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

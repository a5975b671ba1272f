import SubscriptionMetrics

/// Builds the page's charts from the report tables: which rows each chart draws, its series, and its data table.
/// Every value drawn or written is a CSV cell's text (or an exact sum of such cells, tagged as one).
struct HTMLSections: Sendable {
    let subscriptions: HTMLRows
    let revenue: HTMLRows
    let retention: HTMLRows
    let trials: HTMLRows
    let grace: HTMLRows
    let mrr: HTMLRows
    /// `--currency`: the MRR chart draws the converted amounts in it.
    let reportingCurrency: String?
    /// The numerator of each subscriptions_monthly row's `churn_rate` (spells counted in `active_start` that ended
    /// in the month), by month, platform and product: the page says "5 of 87" with the rate's own numbers, where
    /// `churned` (6) also counts spells that started in the month.
    let churnedFromStart: [[String]: Int]

    init(_ tables: ReportTables) {
        let texts = Dictionary(tables.texts.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        func rows(_ name: String) -> HTMLRows {
            texts[name].map(HTMLRows.init) ?? HTMLRows(name: name, columns: [], rows: [])
        }
        subscriptions = rows("subscriptions_monthly")
        revenue = rows("revenue_monthly")
        retention = rows("retention_cohorts")
        trials = rows("trial_conversion")
        grace = rows("grace_recovery")
        mrr = rows("mrr_movements")
        reportingCurrency = tables.reportingCurrency
        churnedFromStart = Dictionary(tables.subscriptionsMonthly.map { ([$0.month, $0.platform, $0.productId], $0.churnRate.numerator) },
                                      uniquingKeysWith: { first, _ in first })
    }

    /// The `churn_rate` numerator of a subscriptions_monthly row, as a page cell tagged with its rate.
    func churnedFromStartCell(_ row: [String]) -> HTMLDataTable.Cell {
        let key = ["month", "platform", "product_id"].map { subscriptions.text(row, $0) }
        guard let count = churnedFromStart[key] else { return .missing }
        return .value(String(count), subscriptions.source(row, "churn_rate").numerator(over: "active_start"))
    }

    /// The ids of every chart, in page order: the browser check expects each of them.
    static let chartIds = ["chart-active", "chart-churn", "chart-movement", "chart-products", "chart-retention", "chart-trials",
                           "chart-grace", "chart-revenue", "chart-mrr"]

    var all: [HTMLSection] {
        [active, churn, movement, productSection, retentionSection, trialSection, graceSection, revenueSection, mrrSection]
    }

    /// Platform series: the total first (black, solid), then each store.
    static func platformStyle(_ platform: String) -> HTMLStyle {
        switch platform {
        case "all": HTMLStyle(HTMLStyle.black)
        case "apple": HTMLStyle(HTMLStyle.blue, pattern: .solid, dash: "6 3", marker: .square)
        case "google": HTMLStyle(HTMLStyle.orange, pattern: .hatch, dash: "2 3", marker: .triangle)
        default: HTMLStyle(HTMLStyle.purple, pattern: .dots, dash: "8 3 2 3", marker: .diamond)
        }
    }

    // MARK: subscriptions_monthly

    /// Total rows (`product_id` = `all`) of subscriptions_monthly, the rows of the first three charts.
    private var totalRows: [[String]] { subscriptions.filter(["product_id": "all"]) }

    private var active: HTMLSection {
        let id = "chart-active", title = "Active subscriptions by month"
        let rows = totalRows
        guard !rows.isEmpty else {
            return .empty(id: id, title: title, source: subscriptions.name, reason: "subscriptions_monthly.csv has no rows.")
        }
        let months = subscriptions.distinct("month", in: rows)
        let platforms = ["all"] + subscriptions.distinct("platform", in: rows).filter { $0 != "all" }.sorted()
        func row(_ month: String, _ platform: String) -> [String]? {
            rows.first { subscriptions.text($0, "month") == month && subscriptions.text($0, "platform") == platform }
        }
        let series = platforms.map { platform in
            HTMLSeries(name: platform == "all" ? "all platforms" : platform, style: Self.platformStyle(platform),
                       points: months.map { month in row(month, platform).flatMap { subscriptions.point($0, "active_end") } })
        }
        let last = months[months.count - 1]
        let lastFigures = platforms.compactMap { platform in
            row(last, platform).map { (platform == "all" ? "all platforms" : platform) + " " + subscriptions.text($0, "active_end") }
        }
        let peak = rows.filter { subscriptions.text($0, "platform") == "all" }
            .max { (subscriptions.value($0, "active_end") ?? 0) < (subscriptions.value($1, "active_end") ?? 0) }
        var summary = "Subscriptions in paid state (grace included) at the end of each month, \(months[0]) to \(last)"
            + " (\(last) runs to the as-of time). At the end of \(last): " + lastFigures.joined(separator: ", ") + "."
        if let peak {
            summary += " Highest total: " + subscriptions.text(peak, "active_end") + " at the end of " + subscriptions.text(peak, "month") + "."
        }
        let chart = HTMLChart(id: id + "-svg", title: title, summary: summary, xLabel: "month (end of)",
                              yLabel: "active subscriptions", categories: months, lines: series)
        let table = HTMLDataTable(
            caption: "Active subscriptions at month end (active_end) and trials at month end (active_trials_end)",
            header: ["month"] + platforms.map { ($0 == "all" ? "all platforms" : $0) + ": active_end" } + ["all platforms: active_trials_end"],
            rows: months.map { month in
                [.label(month)] + platforms.map { platform in row(month, platform).map { subscriptions.cell($0, "active_end") } ?? .missing }
                    + [row(month, "all").map { subscriptions.cell($0, "active_trials_end") } ?? .missing]
            })
        return HTMLSection(id: id, title: title, source: subscriptions.name, summary: summary, panels: [chart.svg()], tables: [table])
    }

    /// Churn reasons: column, legend name, style.
    private static let churnReasons: [(column: String, name: String, style: HTMLStyle)] = [
        ("churned_voluntary", "voluntary", HTMLStyle(HTMLStyle.orange)),
        ("churned_involuntary", "involuntary", HTMLStyle(HTMLStyle.vermillion, pattern: .hatch)),
        ("churned_refund", "refund", HTMLStyle(HTMLStyle.purple, pattern: .dots)),
        ("churned_paused", "paused", HTMLStyle(HTMLStyle.skyBlue, pattern: .crosshatch)),
        ("churned_other", "other", HTMLStyle(HTMLStyle.grey)),
    ]

    private var churn: HTMLSection {
        let id = "chart-churn", title = "Churn by month and reason (all platforms)"
        let rows = totalRows.filter { subscriptions.text($0, "platform") == "all" }
        guard !rows.isEmpty else {
            return .empty(id: id, title: title, source: subscriptions.name, reason: "subscriptions_monthly.csv has no rows.")
        }
        let months = rows.map { subscriptions.text($0, "month") }
        let bars = Self.churnReasons.map { reason in
            HTMLSeries(name: reason.name, style: reason.style, points: rows.map { subscriptions.point($0, reason.column) })
        }
        let rates = [
            HTMLSeries(name: "churn rate", style: HTMLStyle(HTMLStyle.black), points: rows.map { subscriptions.percentPoint($0, "churn_rate") }),
            HTMLSeries(name: "net churn rate", style: HTMLStyle(HTMLStyle.blue, dash: "6 3", marker: .diamond),
                       points: rows.map { subscriptions.percentPoint($0, "net_churn_rate") }),
        ]
        let worst = rows.max { (subscriptions.value($0, "churned") ?? 0) < (subscriptions.value($1, "churned") ?? 0) }
        var summary = "Paid spells ending each month, stacked by reason (voluntary, involuntary, refund, paused, other),"
            + " with the churn rate and net churn rate on the right axis. The churn rate counts the spells active at the"
            + " start of the month that ended in it (a spell that started and ended in the month is churned, but not in"
            + " the rate); the net churn rate is (churned − reactivated) / active at the start."
        if let worst {
            summary += " Most churn: " + subscriptions.text(worst, "churned") + " in " + subscriptions.text(worst, "month")
                + " (voluntary " + subscriptions.text(worst, "churned_voluntary") + ", involuntary "
                + subscriptions.text(worst, "churned_involuntary") + ", refund " + subscriptions.text(worst, "churned_refund")
                + ", paused " + subscriptions.text(worst, "churned_paused") + ", other " + subscriptions.text(worst, "churned_other") + ")."
        }
        let chart = HTMLChart(id: id + "-svg", title: title, summary: summary, xLabel: "month", yLabel: "spells ended",
                              categories: months, bars: bars, rateLines: rates, rateLabel: "rate (% of active at start)")
        let columns = Self.churnReasons.map(\.column) + ["churned", "active_start"]
        let table = HTMLDataTable(caption: "Churn by month, all platforms (subscriptions_monthly, platform all, product all)",
                                  header: ["month"] + columns + ["of them active at the start", "churn_rate", "net_churn_rate"],
                                  rows: rows.map { row in
                                      [.label(subscriptions.text(row, "month"))] + columns.map { subscriptions.cell(row, $0) }
                                          + [churnedFromStartCell(row), subscriptions.percentCell(row, "churn_rate"),
                                             subscriptions.percentCell(row, "net_churn_rate")]
                                  })
        return HTMLSection(id: id, title: title, source: subscriptions.name, summary: summary, panels: [chart.svg()], tables: [table])
    }

    private var movement: HTMLSection {
        let id = "chart-movement", title = "New, reactivated and churned subscriptions (all platforms)"
        let rows = totalRows.filter { subscriptions.text($0, "platform") == "all" }
        guard !rows.isEmpty else {
            return .empty(id: id, title: title, source: subscriptions.name, reason: "subscriptions_monthly.csv has no rows.")
        }
        let months = rows.map { subscriptions.text($0, "month") }
        let churned = rows.map { row in subscriptions.point(row, "churned").map { HTMLPoint(value: -$0.value, hover: $0.hover) } }
        let bars = [
            HTMLSeries(name: "new", style: HTMLStyle(HTMLStyle.green), points: rows.map { subscriptions.point($0, "new") }),
            HTMLSeries(name: "reactivated", style: HTMLStyle(HTMLStyle.skyBlue, pattern: .hatch),
                       points: rows.map { subscriptions.point($0, "reactivated") }),
            HTMLSeries(name: "churned (drawn below zero)", style: HTMLStyle(HTMLStyle.vermillion, pattern: .dots), points: churned),
        ]
        let last = rows[rows.count - 1]
        let summary = "Paid spells starting (new above, reactivated stacked on them) and ending (churned, below zero) each month."
            + " In " + subscriptions.text(last, "month") + ": " + subscriptions.text(last, "new") + " new, "
            + subscriptions.text(last, "reactivated") + " reactivated, " + subscriptions.text(last, "churned") + " churned; "
            + subscriptions.text(last, "active_end") + " active at the end."
        let chart = HTMLChart(id: id + "-svg", title: title, summary: summary, xLabel: "month", yLabel: "paid spells",
                              categories: months, bars: bars)
        let columns = ["active_start", "new", "reactivated", "churned", "active_end"]
        let table = HTMLDataTable(caption: "Movement by month, all platforms (subscriptions_monthly, platform all, product all)",
                                  header: ["month"] + columns,
                                  rows: rows.map { row in [.label(subscriptions.text(row, "month"))] + columns.map { subscriptions.cell(row, $0) } })
        return HTMLSection(id: id, title: title, source: subscriptions.name, summary: summary, panels: [chart.svg()], tables: [table])
    }
}

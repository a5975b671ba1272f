/// The MRR movements chart (`mrr_movements`): a waterfall per platform, month by month: MRR at the start, new,
/// expansion, reactivation, contraction, churned, MRR at the end.
///
/// Amounts of different currencies are never added: without `--currency` there is a panel per platform and
/// currency, drawing the CSV rows as they are; with `--currency` a panel per platform in the reporting currency,
/// drawing the exact sums of the `*_converted` cells over the platform's currencies (a month with a missing rate
/// is left blank). Every figure is tagged with its cell or sum, like the rest of the page.
extension HTMLSections {
    /// The movements in waterfall order (gains, then losses): CSV column, how it is drawn, and whether it adds.
    private static let mrrSteps: [(column: String, style: HTMLStyle, adds: Bool)] = [
        ("new", HTMLStyle(HTMLStyle.green), true),
        ("expansion", HTMLStyle(HTMLStyle.skyBlue, pattern: .hatch), true),
        ("reactivation", HTMLStyle(HTMLStyle.blue, pattern: .dots), true),
        ("contraction", HTMLStyle(HTMLStyle.orange, pattern: .crosshatch), false),
        ("churned", HTMLStyle(HTMLStyle.vermillion), false),
    ]

    /// The amount columns of the data tables, in waterfall order, then the counts.
    private static let mrrAmounts = ["mrr_start"] + mrrSteps.map(\.column) + ["mrr_end"]
    private static let mrrCounts = mrrSteps.map { $0.column + "_count" }

    var mrrSection: HTMLSection {
        let id = "chart-mrr", title = "MRR movements by month: why recurring revenue changed"
        guard !mrr.rows.isEmpty else {
            return .empty(id: id, title: title, source: mrr.name, reason: "mrr_movements.csv has no rows (no priced paid period yet).")
        }
        let platforms = mrr.distinct("platform").sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        var panels: [String] = []
        var tables: [HTMLDataTable] = []
        var sentences: [String] = []
        func add(_ panel: (svg: String, table: HTMLDataTable, sentence: String), name: String) {
            panels.append("<h3>" + HTMLText.escape("MRR movements, " + name) + "</h3>" + panel.svg)
            tables.append(panel.table)
            sentences.append(panel.sentence)
        }
        if let reporting = reportingCurrency {
            for platform in platforms {
                let rows = mrr.filter(["platform": platform])
                let byMonth = Dictionary(grouping: rows) { mrr.text($0, "month") }
                let name = platform + " in " + reporting
                add(mrrPanel(id: "\(id)-svg-\(panels.count)", name: name, unit: reporting, converted: true,
                             months: Self.monthRange(mrr.distinct("month", in: rows))) { month, column in
                    guard let cells = byMonth[month] else { return nil }
                    return HTMLDecimal.sum(cells.map { mrr.text($0, column) }, places: column.hasSuffix("_count") ? 0 : 2).map {
                        ($0, .sum(mrr.name, where: [("month", month), ("platform", platform)], column))
                    }
                }, name: name)
            }
        } else {
            for platform in platforms {
                let platformRows = mrr.filter(["platform": platform])
                for currency in mrr.distinct("currency", in: platformRows).sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                    let rows = platformRows.filter { mrr.text($0, "currency") == currency }
                    let byMonth = Dictionary(rows.map { (mrr.text($0, "month"), $0) }, uniquingKeysWith: { first, _ in first })
                    let name = platform + ", " + currency
                    add(mrrPanel(id: "\(id)-svg-\(panels.count)", name: name, unit: currency, converted: false,
                                 months: Self.monthRange(mrr.distinct("month", in: rows))) { month, column in
                        byMonth[month].map { (mrr.text($0, column), mrr.source($0, column)) }
                    }, name: name)
                }
            }
        }
        let summary = "Monthly recurring revenue at the start of each month (grey), what moved it (new, expansion and"
            + " reactivation up; contraction and churn down, each a step from where the last one ended) and MRR at the"
            + " end (black), " + (reportingCurrency.map { "per platform in " + $0 + " at each month's rate." }
                                  ?? "per platform and currency; amounts of different currencies are never added.")
            + " " + sentences.joined(separator: " ")
        return HTMLSection(id: id, title: title, source: mrr.name, summary: summary, panels: panels, tables: tables)
    }

    /// One waterfall and its data table. `figure(month, column)` gives the text shown for a CSV column (already
    /// `_converted` when `converted`) and its source, or `nil` when the month has no figure.
    private func mrrPanel(id: String, name: String, unit: String, converted: Bool, months: [String],
                          figure: (String, String) -> (text: String, source: HTMLSource)?)
        -> (svg: String, table: HTMLDataTable, sentence: String) {
        func column(_ base: String) -> String { converted && !base.hasSuffix("_count") ? base + "_converted" : base }
        func point(_ month: String, _ base: String) -> HTMLPoint? {
            figure(month, column(base)).flatMap { shown in
                Double(shown.text).map { HTMLPoint(value: $0, hover: shown.text + " " + unit) }
            }
        }
        let bars = months.map { month -> HTMLWaterfall.Month? in
            guard let start = point(month, "mrr_start"), let end = point(month, "mrr_end") else { return nil }
            let steps = Self.mrrSteps.compactMap { point(month, $0.column) }
            return steps.count == Self.mrrSteps.count ? HTMLWaterfall.Month(start: start, steps: steps, end: end) : nil
        }
        var sentence = name + ": no figures."
        if let last = months.last, let start = figure(last, column("mrr_start")), let end = figure(last, column("mrr_end")) {
            sentence = name + ", " + last + ": MRR " + start.text + " at the start, " + end.text + " at the end; "
                + Self.mrrSteps.map { step in step.column + " " + (figure(last, column(step.column))?.text ?? "–") }.joined(separator: ", ")
                + "."
        }
        let chart = HTMLWaterfall(
            id: id, title: "MRR movements, " + name, summary: sentence, yLabel: "MRR in " + unit,
            startName: "MRR at start", endName: "MRR at end",
            steps: Self.mrrSteps.map { HTMLWaterfall.Step(name: $0.column, style: $0.style, adds: $0.adds) },
            categories: months, months: bars)
        let columns = (Self.mrrAmounts + Self.mrrCounts).map(column)
        let table = HTMLDataTable(
            caption: "MRR movements by month, " + name + (converted ? " (sums of mrr_movements' converted amounts over currencies)" : " (mrr_movements)"),
            header: ["month"] + columns,
            rows: months.map { month in
                [.label(month)] + columns.map { column in figure(month, column).map { .value($0.text, $0.source) } ?? .missing }
            })
        return (chart.svg(), table, sentence)
    }
}

/// The revenue chart: a panel per purchase currency with gross (up), refunds (down), net and MRR by month.
/// Amounts of different currencies are never added; within a currency the page shows exact sums over platforms
/// and products, tagged `data-sum` so they can be checked against the CSV.
extension HTMLSections {
    private static let amounts = ["gross", "refunds", "net", "mrr_end"]

    var revenueSection: HTMLSection {
        let id = "chart-revenue", title = "Revenue by month per currency: gross, refunds, net and MRR"
        let currencies = revenue.distinct("currency").filter { !$0.isEmpty }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        guard !currencies.isEmpty else {
            return .empty(id: id, title: title, source: revenue.name, reason: "revenue_monthly.csv has no priced rows.")
        }
        let months = Self.monthRange(revenue.distinct("month"))
        var grouped: [String: [String: [[String]]]] = [:]
        var byMonth: [String: [[String]]] = [:]
        for row in revenue.rows {
            grouped[revenue.text(row, "currency"), default: [:]][revenue.text(row, "month"), default: []].append(row)
            byMonth[revenue.text(row, "month"), default: []].append(row)
        }
        var panels: [String] = []
        var tables: [HTMLDataTable] = []
        var sentences: [String] = []
        func add(_ panel: (svg: String, table: HTMLDataTable, sentence: String)) {
            panels.append(panel.svg)
            tables.append(panel.table)
            sentences.append(panel.sentence)
        }
        // With --currency: first the total over every currency, platform and product in the reporting currency
        // (the sums of the *_converted cells; a month with a missing rate is blank, never a partial total).
        if let reporting = reportingCurrency {
            add(revenuePanel(id: "\(id)-svg-\(panels.count)", name: "all currencies in " + reporting, unit: reporting, months: months,
                             converted: true) { month, column in
                let rows = byMonth[month] ?? []
                return HTMLDecimal.sum(rows.map { revenue.text($0, column) }, places: 2).map {
                    ($0, .sum(revenue.name, where: [("month", month)], column))
                }
            })
        }
        for currency in currencies {
            let rowsByMonth = grouped[currency] ?? [:]
            add(revenuePanel(id: "\(id)-svg-\(panels.count)", name: currency, unit: currency, months: months, converted: false) { month, column in
                HTMLDecimal.sum((rowsByMonth[month] ?? []).map { revenue.text($0, column) }, places: 2).map {
                    ($0, .sum(revenue.name, where: [("month", month), ("currency", currency)], column))
                }
            })
        }
        let summary = "Gross revenue (bars up), refunds (bars down), net revenue and monthly recurring revenue at month end"
            + " (lines), in each purchase currency; amounts of different currencies are never added"
            + (reportingCurrency.map { ", except in the first panel, converted to " + $0 + " at each month's rate" } ?? "") + ". "
            + sentences.joined(separator: " ")
        var notes: [String] = []
        let unpriced = revenue.rows.map { revenue.text($0, "unpriced_transactions") }
        if let total = HTMLDecimal.sum(unpriced, places: 0), total != "0" {
            notes.append("Transactions with no known price or currency (counted, never guessed; not in the amounts above): <span"
                         + HTMLSource.sum(revenue.name, where: [], "unpriced_transactions").attributes + ">" + total + "</span>.")
        }
        return HTMLSection(id: id, title: title, source: revenue.name, summary: summary, panels: panels, tables: tables, notes: notes)
    }

    /// One revenue panel and its table. `figure(month, column)` gives the text of an amount column (already
    /// `_converted` when `converted`) summed over the panel's rows, and its source; `nil` when the month has none.
    private func revenuePanel(id: String, name: String, unit: String, months: [String], converted: Bool,
                              figure: (String, String) -> (text: String, source: HTMLSource)?)
        -> (svg: String, table: HTMLDataTable, sentence: String) {
        let columns = Self.amounts.map { converted ? $0 + "_converted" : $0 }
        let sums = columns.map { column in months.map { month in figure(month, column) } }
        func points(_ amount: Int, negated: Bool = false) -> [HTMLPoint?] {
            sums[amount].map { shown in
                shown.flatMap { shown in Double(shown.text).map { HTMLPoint(value: negated ? -$0 : $0, hover: unit + " " + shown.text) } }
            }
        }
        var sentence = name
        if let last = months.indices.last {
            let text = { (amount: Int) in sums[amount][last]?.text ?? "–" }
            sentence += ", " + months[last] + ": gross " + text(0) + ", refunds " + text(1) + ", net " + text(2)
                + ", MRR at month end " + text(3)
        }
        sentence += "."
        let chart = HTMLChart(
            id: id, title: "Revenue, " + name,
            summary: "Revenue, " + name + ", by month, all platforms and products. " + sentence, xLabel: "month",
            yLabel: "amount in " + unit,
            categories: months,
            bars: [HTMLSeries(name: "gross", style: HTMLStyle(HTMLStyle.blue), points: points(0)),
                   HTMLSeries(name: "refunds (drawn below zero)", style: HTMLStyle(HTMLStyle.vermillion, pattern: .hatch),
                              points: points(1, negated: true))],
            lines: [HTMLSeries(name: "net", style: HTMLStyle(HTMLStyle.black), points: points(2)),
                    HTMLSeries(name: "MRR at month end", style: HTMLStyle(HTMLStyle.green, dash: "6 3", marker: .square),
                               points: points(3))],
            integerTicks: false)
        let table = HTMLDataTable(
            caption: "Revenue, " + name + ", by month: sums of revenue_monthly" + (converted ? "'s converted amounts" : "")
                + " over platforms and products",
            header: ["month"] + columns,
            rows: months.enumerated().map { index, month in
                [.label(month)] + columns.indices.map { amount in sums[amount][index].map { .value($0.text, $0.source) } ?? .missing }
            })
        return ("<h3>" + HTMLText.escape("Revenue, " + name) + "</h3>" + chart.svg(), table, sentence)
    }

    /// Every month from the earliest to the latest label given (`YYYY-MM`), so gaps show as zero months rather
    /// than being squeezed out; the labels as given, sorted, when one does not parse or the range is absurd.
    static func monthRange(_ labels: [String]) -> [String] {
        let sorted = labels.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let numbers = sorted.compactMap(monthNumber)
        guard numbers.count == sorted.count, let first = numbers.first, let last = numbers.last, last - first < 1200 else {
            return sorted
        }
        return (first...last).map { month in
            let year = String(month / 12)
            let monthOfYear = month % 12 + 1
            return String(repeating: "0", count: max(0, 4 - year.count)) + year + (monthOfYear < 10 ? "-0" : "-") + String(monthOfYear)
        }
    }

    private static func monthNumber(_ label: String) -> Int? {
        let parts = label.split(separator: "-")
        guard parts.count == 2, parts[0].count == 4, parts[1].count == 2, let year = Int(parts[0]), let month = Int(parts[1]),
              (1...12).contains(month), year >= 0 else { return nil }
        return year * 12 + month - 1
    }
}

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
        for row in revenue.rows {
            grouped[revenue.text(row, "currency"), default: [:]][revenue.text(row, "month"), default: []].append(row)
        }
        var panels: [String] = []
        var tables: [HTMLDataTable] = []
        var sentences: [String] = []
        for (number, currency) in currencies.enumerated() {
            let byMonth = grouped[currency] ?? [:]
            /// sums[amount][month index]: exact text, `nil` when a cell was not a decimal (never for engine output).
            let sums = Self.amounts.map { amount in
                months.map { month in HTMLDecimal.sum((byMonth[month] ?? []).map { revenue.text($0, amount) }, places: 2) }
            }
            func points(_ amount: Int, negated: Bool = false) -> [HTMLPoint?] {
                sums[amount].map { text in
                    text.flatMap { text in Double(text).map { HTMLPoint(value: negated ? -$0 : $0, hover: currency + " " + text) } }
                }
            }
            var sentence = currency
            if let last = months.indices.last {
                sentence += ", " + months[last] + ": gross " + (sums[0][last] ?? "") + ", refunds " + (sums[1][last] ?? "")
                    + ", net " + (sums[2][last] ?? "") + ", MRR at month end " + (sums[3][last] ?? "")
            }
            sentences.append(sentence + ".")
            let chart = HTMLChart(
                id: "\(id)-svg-\(number)", title: "Revenue in " + currency,
                summary: "Revenue in " + currency + " by month, all platforms and products. " + sentences[sentences.count - 1], xLabel: "month",
                yLabel: "amount in " + currency,
                categories: months,
                bars: [HTMLSeries(name: "gross", style: HTMLStyle(HTMLStyle.blue), points: points(0)),
                       HTMLSeries(name: "refunds (drawn below zero)", style: HTMLStyle(HTMLStyle.vermillion, pattern: .hatch),
                                  points: points(1, negated: true))],
                lines: [HTMLSeries(name: "net", style: HTMLStyle(HTMLStyle.black), points: points(2)),
                        HTMLSeries(name: "MRR at month end", style: HTMLStyle(HTMLStyle.green, dash: "6 3", marker: .square),
                                   points: points(3))],
                integerTicks: false)
            panels.append("<h3>" + HTMLText.escape("Revenue in " + currency) + "</h3>" + chart.svg())
            tables.append(HTMLDataTable(
                caption: "Revenue in " + currency + " by month: sums of revenue_monthly over platforms and products",
                header: ["month"] + Self.amounts,
                rows: months.enumerated().map { index, month in
                    [.label(month)] + Self.amounts.enumerated().map { amount, column in
                        sums[amount][index].map {
                            .value($0, .sum(revenue.name, where: [("month", month), ("currency", currency)], column))
                        } ?? .missing
                    }
                }))
        }
        let summary = "Gross revenue (bars up), refunds (bars down), net revenue and monthly recurring revenue at month end"
            + " (lines), in each purchase currency; amounts of different currencies are never added. " + sentences.joined(separator: " ")
        var notes: [String] = []
        let unpriced = revenue.rows.map { revenue.text($0, "unpriced_transactions") }
        if let total = HTMLDecimal.sum(unpriced, places: 0), total != "0" {
            notes.append("Transactions with no known price or currency (counted, never guessed; not in the amounts above): <span"
                         + HTMLSource.sum(revenue.name, where: [], "unpriced_transactions").attributes + ">" + total + "</span>.")
        }
        return HTMLSection(id: id, title: title, source: revenue.name, summary: summary, panels: panels, tables: tables, notes: notes)
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

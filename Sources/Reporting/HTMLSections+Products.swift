/// Products side by side: a small chart per platform and product (active subscriptions at month end, and the
/// churn rate in percent), all on the same scales so that panels compare at a glance: the page's answer to "and
/// per product?" without a script to filter with.
extension HTMLSections {
    var productSection: HTMLSection {
        let id = "chart-products", title = "Per product: active subscriptions and churn rate"
        let rows = subscriptions.rows.filter { subscriptions.text($0, "platform") != "all" && subscriptions.text($0, "product_id") != "all" }
        guard !rows.isEmpty else {
            return .empty(id: id, title: title, source: subscriptions.name, reason: "subscriptions_monthly.csv has no product rows.")
        }
        var keys: [(platform: String, product: String)] = []
        var seen = Set<[String]>()
        for row in rows where seen.insert([subscriptions.text(row, "platform"), subscriptions.text(row, "product_id")]).inserted {
            keys.append((subscriptions.text(row, "platform"), subscriptions.text(row, "product_id")))
        }
        keys.sort { $0.platform != $1.platform ? $0.platform.utf8.lexicographicallyPrecedes($1.platform.utf8)
            : $0.product.utf8.lexicographicallyPrecedes($1.product.utf8) }
        let months = Self.monthRange(subscriptions.distinct("month", in: rows))
        var byKey: [[String]: [[String]]] = [:]
        for row in rows { byKey[[subscriptions.text(row, "platform"), subscriptions.text(row, "product_id")], default: []].append(row) }
        let highest = rows.compactMap { subscriptions.value($0, "active_end") }.max() ?? 0
        let highestRate = rows.compactMap { subscriptions.value($0, "churn_rate") }.max().map { $0 * 100 } ?? 0
        var panels: [String] = []
        var sentences: [String] = []
        var columns: [(key: (platform: String, product: String), column: String)] = []
        for (number, key) in keys.enumerated() {
            let productRows = byKey[[key.platform, key.product]] ?? []
            let row = { (month: String) in productRows.first { subscriptions.text($0, "month") == month } }
            let name = key.platform + " " + key.product
            var sentence = name
            if let last = productRows.last {
                sentence += ": " + subscriptions.text(last, "active_end") + " active at the end of " + subscriptions.text(last, "month")
                    + (subscriptions.text(last, "churn_rate").isEmpty ? "" : ", churn rate " + subscriptions.percentText(last, "churn_rate"))
            }
            sentences.append(sentence + ".")
            let chart = HTMLChart(
                id: "\(id)-svg-\(number)", title: name, summary: sentences[sentences.count - 1], xLabel: "month", yLabel: "active at month end",
                categories: months,
                lines: [HTMLSeries(name: "active", style: Self.platformStyle(key.platform),
                                   points: months.map { row($0).flatMap { subscriptions.point($0, "active_end") } })],
                rateLines: [HTMLSeries(name: "churn %", style: HTMLStyle(HTMLStyle.vermillion, dash: "2 3", marker: .diamond),
                                       points: months.map { row($0).flatMap { subscriptions.percentPoint($0, "churn_rate") } })],
                rateLabel: "churn rate (%)", sharedValues: [highest], sharedRates: [highestRate], width: 480)
            panels.append("<div class=\"multiple\"><h3>" + HTMLText.escape(name) + "</h3>" + chart.svg() + "</div>")
            columns += [(key, "active_end"), (key, "churn_rate")]
        }
        let table = HTMLDataTable(
            caption: "Active subscriptions at month end and churn rate (%) per product (subscriptions_monthly)",
            header: ["month"] + columns.map { $0.key.platform + " " + $0.key.product + ": " + $0.column },
            rows: months.map { month in
                [.label(month)] + columns.map { entry in
                    guard let row = (byKey[[entry.key.platform, entry.key.product]] ?? []).first(where: { subscriptions.text($0, "month") == month })
                    else { return .missing }
                    return entry.column == "churn_rate" ? subscriptions.percentCell(row, entry.column) : subscriptions.cell(row, entry.column)
                }
            })
        let summary = "One small chart per platform and product, on the same scales: subscriptions in paid state at the end of"
            + " each month (line, left axis) and the churn rate in percent (dashed, right axis). " + sentences.joined(separator: " ")
        return HTMLSection(id: id, title: title, source: subscriptions.name, summary: summary,
                           panels: ["<div class=\"multiples\">" + panels.joined() + "</div>"], tables: [table])
    }
}

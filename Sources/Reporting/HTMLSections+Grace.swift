/// The billing-issue chart: episode outcomes by month of E, a panel per platform.
extension HTMLSections {
    private static let outcomes: [(column: String, name: String, style: HTMLStyle)] = [
        ("recovered_in_grace", "recovered in grace", HTMLStyle(HTMLStyle.green)),
        ("recovered_in_retry", "recovered in retry", HTMLStyle(HTMLStyle.skyBlue, pattern: .hatch)),
        ("lost", "lost", HTMLStyle(HTMLStyle.vermillion, pattern: .dots)),
        ("open", "open", HTMLStyle(HTMLStyle.grey, pattern: .crosshatch)),
    ]

    var graceSection: HTMLSection {
        let id = "chart-grace", title = "Billing issues by month: outcomes and recovery rate"
        guard !grace.rows.isEmpty else {
            return .empty(id: id, title: title, source: grace.name, reason: "grace_recovery.csv has no rows (no failed renewals).")
        }
        let months = grace.distinct("month").sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        let platforms = grace.distinct("platform").sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        var panels: [String] = []
        var sentences: [String] = []
        for platform in platforms {
            let rows = grace.filter(["platform": platform])
            let byMonth = months.map { month in rows.first { grace.text($0, "month") == month } }
            let bars = Self.outcomes.map { outcome in
                HTMLSeries(name: outcome.name, style: outcome.style, points: byMonth.map { $0.flatMap { grace.point($0, outcome.column) } })
            }
            let rate = HTMLSeries(name: "recovery rate", style: HTMLStyle(HTMLStyle.black),
                                  points: byMonth.map { $0.flatMap { grace.percentPoint($0, "recovery_rate") } })
            var sentence = platform + ": episodes in \(rows.count) month" + (rows.count == 1 ? "" : "s")
            if let last = rows.last {
                sentence += "; in " + grace.text(last, "month") + ", " + grace.text(last, "episodes") + " episodes: "
                    + grace.text(last, "recovered_in_grace") + " recovered in grace, " + grace.text(last, "recovered_in_retry")
                    + " in retry, " + grace.text(last, "lost") + " lost, " + grace.text(last, "open") + " open"
                    + (grace.text(last, "recovery_rate").isEmpty ? "" : ", recovery rate " + grace.percentText(last, "recovery_rate"))
                    + (grace.text(last, "open") == "0" ? "" : " (provisional while episodes are open)")
            }
            sentences.append(sentence + ".")
            let chart = HTMLChart(id: "\(id)-svg-\(panels.count)", title: "Billing-issue outcomes, " + platform,
                                  summary: sentences[sentences.count - 1], xLabel: "month the renewal failed (E)",
                                  yLabel: "episodes", categories: months, bars: bars, rateLines: [rate],
                                  rateLabel: "recovery rate (%)")
            panels.append("<h3>" + HTMLText.escape("Billing issues, " + platform) + "</h3>" + chart.svg())
        }
        let summary = "Billing-issue episodes by the month the renewal failed, stacked by outcome (recovered in grace,"
            + " recovered in billing retry or account hold, lost, still open), with the recovery rate"
            + " (recovered / (recovered + lost)) on the right axis; a panel per platform. Open episodes are not in the rate"
            + " yet: a month with open episodes has a provisional rate. " + sentences.joined(separator: " ")
        let counts = ["episodes", "with_grace", "recovered_in_grace", "recovered_in_retry", "lost", "open"]
        let rates = ["recovery_rate", "grace_recovery_rate"]
        let table = HTMLDataTable(caption: "Billing-issue episodes by month of E and platform (grace_recovery); rates are provisional while episodes are open",
                                  header: ["month", "platform"] + counts + rates + ["median_hours_to_recover"],
                                  rows: grace.rows.map { row in
                                      [.label(grace.text(row, "month")), .label(grace.text(row, "platform"))] + counts.map { grace.cell(row, $0) }
                                          + rates.map { grace.percentCell(row, $0) } + [grace.cell(row, "median_hours_to_recover")]
                                  })
        return HTMLSection(id: id, title: title, source: grace.name, summary: summary, panels: panels, tables: [table])
    }
}

/// The cohort charts: retention heat maps and trial conversion.
extension HTMLSections {
    /// One heat map per (platform, duration): cohorts down, renewal periods across, colour and the number in a
    /// cell = retention_rate in percent; hatched where `complete` is false. Weekly products have a column per week:
    /// their map scrolls sideways with every column labelled.
    var retentionSection: HTMLSection {
        let id = "chart-retention", title = "Retention by cohort (per platform and billing duration)"
        guard !retention.rows.isEmpty else {
            return .empty(id: id, title: title, source: retention.name, reason: "retention_cohorts.csv has no rows (no cohort has had a renewal due yet).")
        }
        var groups: [(platform: String, duration: String)] = []
        var seen = Set<[String]>()
        for row in retention.rows where seen.insert([retention.text(row, "platform"), retention.text(row, "duration")]).inserted {
            groups.append((retention.text(row, "platform"), retention.text(row, "duration")))
        }
        groups.sort { $0.platform != $1.platform ? $0.platform.utf8.lexicographicallyPrecedes($1.platform.utf8)
            : $0.duration.utf8.lexicographicallyPrecedes($1.duration.utf8) }
        var panels: [String] = []
        var tables: [HTMLDataTable] = []
        var sentences: [String] = []
        for (number, group) in groups.enumerated() {
            let rows = retention.filter(["platform": group.platform, "duration": group.duration])
            let cohorts = retention.distinct("cohort_month", in: rows)
            let periods = rows.compactMap { Int(retention.text($0, "period")) }
            let width = (periods.max() ?? 0) + 1
            var grid = [[[String]?]](repeating: [[String]?](repeating: nil, count: width), count: cohorts.count)
            let cohortIndex = Dictionary(cohorts.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
            for row in rows {
                guard let c = cohortIndex[retention.text(row, "cohort_month")], let k = Int(retention.text(row, "period")),
                      k >= 0, k < width else { continue }
                grid[c][k] = row
            }
            let name = group.platform + " " + group.duration
            let cells = grid.map { line in
                line.map { cell in
                    cell.map { row in
                        HTMLHeatCell(rate: retention.value(row, "retention_rate") ?? 0,
                                     text: HTMLPercent.whole(retention.text(row, "retention_rate")) ?? "",
                                     hover: "cohort " + retention.text(row, "cohort_month") + ", period " + retention.text(row, "period")
                                         + ": " + retention.text(row, "retained") + " of " + retention.text(row, "cohort_size")
                                         + " retained, " + retention.percentText(row, "retention_rate")
                                         + (retention.text(row, "complete") == "true" ? "" : " (incomplete)"),
                                     complete: retention.text(row, "complete") == "true")
                    }
                }
            }
            var sentence = name + ": \(cohorts.count) cohort" + (cohorts.count == 1 ? "" : "s")
            if let first = grid.first, let row = first.last ?? nil {
                sentence += "; the first, " + retention.text(row, "cohort_month") + ", keeps " + retention.text(row, "retained")
                    + " of " + retention.text(row, "cohort_size") + " at period " + retention.text(row, "period")
                    + " (" + retention.percentText(row, "retention_rate") + ")"
            }
            sentences.append(sentence + ".")
            let map = HTMLHeatMap(id: "\(id)-svg\(number)", title: "Retention, " + name, summary: sentences[sentences.count - 1],
                                  xLabel: "renewal period k (\(group.duration) each)", yLabel: "cohort",
                                  columns: (0..<width).map(String.init), rows: cohorts, cells: cells, scaleLabel: "retention rate",
                                  incompleteLabel: "incomplete (renewals may still recover)")
            panels.append("<h3>" + HTMLText.escape("Retention, " + name) + "</h3>" + map.html())
            tables.append(HTMLDataTable(
                caption: "retention_rate (%) by cohort and period k, " + name,
                header: ["cohort", "cohort_size"] + (0..<width).map { "k=\($0)" },
                rows: zip(cohorts, grid).map { cohort, line in
                    let first = line.compactMap { $0 }.first
                    return [.label(cohort), first.map { retention.cell($0, "cohort_size") } ?? .missing]
                        + line.map { cell in cell.map { retention.percentCell($0, "retention_rate") } ?? .missing }
                }))
        }
        let summary = "Share of each cohort (first paid period in the month) with at least k + 1 paid periods, one map per"
            + " platform and billing duration; the number in a cell is the retention rate in percent, darker is higher"
            + " (hover a cell for the counts). "
            + sentences.joined(separator: " ")
        return HTMLSection(id: id, title: title, source: retention.name, summary: summary, panels: panels, tables: tables)
    }

    /// Conversion by trial cohort as a heat map: a row per platform and product, a column per cohort month,
    /// colour = conversion_rate, the number in a cell = converted; hatched while trials are pending. (Cohorts are
    /// small and rates jump, so lines per product would cross into a tangle; a grid keeps each product readable.)
    var trialSection: HTMLSection {
        let id = "chart-trials", title = "Trial conversion by cohort"
        guard !trials.rows.isEmpty else {
            return .empty(id: id, title: title, source: trials.name, reason: "trial_conversion.csv has no rows (no trials started).")
        }
        let months = trials.distinct("cohort_month").sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        var keys: [(platform: String, product: String)] = []
        var seen = Set<[String]>()
        for row in trials.rows where seen.insert([trials.text(row, "platform"), trials.text(row, "product_id")]).inserted {
            keys.append((trials.text(row, "platform"), trials.text(row, "product_id")))
        }
        keys.sort { $0.platform != $1.platform ? $0.platform.utf8.lexicographicallyPrecedes($1.platform.utf8)
            : $0.product.utf8.lexicographicallyPrecedes($1.product.utf8) }
        let cells = keys.map { key in
            let rows = trials.filter(["platform": key.platform, "product_id": key.product])
            return months.map { month in
                rows.first { trials.text($0, "cohort_month") == month }.map { row in
                    HTMLHeatCell(rate: trials.value(row, "conversion_rate"), text: HTMLPercent.whole(trials.text(row, "conversion_rate")) ?? "",
                                 hover: month + ", " + key.platform + " " + key.product + ": " + trials.text(row, "trials") + " trials, "
                                     + trials.text(row, "converted") + " converted, " + trials.text(row, "abandoned") + " abandoned, "
                                     + trials.text(row, "pending") + " pending; conversion rate "
                                     + (trials.text(row, "conversion_rate").isEmpty ? "undefined" : trials.percentText(row, "conversion_rate")),
                                 complete: trials.text(row, "pending") == "0")
                }
            }
        }
        let last = trials.rows.filter { trials.text($0, "cohort_month") == months[months.count - 1] }
        let summary = "Share of trials that converted to a paid period, of those decided (converted + abandoned), by the"
            + " month the trial started: a row per platform and product, darker is higher, the number in a cell is the"
            + " conversion rate in percent; hatched cells still have pending trials. Latest cohort, " + months[months.count - 1] + ": "
            + last.map { trials.text($0, "platform") + " " + trials.text($0, "product_id") + " " + trials.text($0, "converted") + " of "
                + trials.text($0, "trials") + " converted, " + trials.text($0, "pending") + " pending" }.joined(separator: "; ") + "."
        let chart = HTMLHeatMap(id: id + "-svg", title: title, summary: summary, xLabel: "trial cohort (month the trial started)",
                                yLabel: "platform · product", columns: months,
                                rows: keys.map { $0.platform + " · " + $0.product }, cells: cells,
                                scaleLabel: "conversion rate", incompleteLabel: "trials still pending",
                                undefinedLabel: "undefined (every trial pending)")
        let columns = ["trials", "converted", "abandoned", "pending"]
        let table = HTMLDataTable(caption: "Trial conversion by cohort, platform and product (trial_conversion)",
                                  header: ["cohort", "platform", "product"] + columns + ["conversion_rate"],
                                  rows: trials.rows.map { row in
                                      [.label(trials.text(row, "cohort_month")), .label(trials.text(row, "platform")),
                                       .label(trials.text(row, "product_id"))] + columns.map { trials.cell(row, $0) }
                                          + [trials.percentCell(row, "conversion_rate")]
                                  })
        return HTMLSection(id: id, title: title, source: trials.name, summary: summary, panels: [chart.html()], tables: [table])
    }
}

import Facts
import Foundation
import SubscriptionMetrics
import Reporting
import Testing

// MARK: - Fixtures

/// ms UTC of a civil date-time (days-from-civil arithmetic).
private func at(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0, ms: Int = 0) -> Millis {
    let y = Int64(month <= 2 ? year - 1 : year)
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let m = Int64(month)
    let dayOfYear = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + Int64(day) - 1
    let days = era * 146_097 + yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear - 719_468
    return ((days * 24 + Int64(hour)) * 60 + Int64(minute)) * 60_000 + Int64(second) * 1000 + Int64(ms)
}

private let dayMillis: Millis = 86_400_000

private func engineTables(_ histories: [SubscriptionHistory], asOf: Millis, prices: PriceList = .empty,
                          zone: String = "UTC") throws -> ReportTables {
    var engine = MetricsEngine(options: ReportOptions(asOf: asOf, timeZone: try #require(TimeZone(identifier: zone)), prices: prices))
    for history in histories { engine.add(history) }
    return engine.finish()
}

/// examples.md: subscriptions A, B and C, as-of 2024-04-30T23:59:59.999Z.
private enum WorkedExample {
    static let asOf = at(2024, 4, 30, 23, 59, 59, ms: 999)

    static func prices() throws -> PriceList {
        try PriceList(csv: """
            platform,product_id,currency,price,duration
            apple,premium_monthly,JPY,480,P1M
            apple,premium_monthly,USD,4.99,P1M
            google,premium_monthly,USD,4.99,P1M
            apple,premium_weekly,USD,1.99,P1W
            """)
    }

    static var histories: [SubscriptionHistory] {
        [
            SubscriptionHistory(platform: .apple, id: "A", periods: [
                Period(id: "a0", productId: "premium_monthly", start: at(2024, 1, 10, 10), end: at(2024, 1, 17, 10), isTrial: true, currency: "JPY"),
                Period(id: "a1", productId: "premium_monthly", start: at(2024, 1, 17, 10), end: at(2024, 2, 17, 10), currency: "JPY", endReason: .billingIssue),
                Period(id: "a2", productId: "premium_monthly", start: at(2024, 2, 20, 8), end: at(2024, 3, 17, 10), currency: "JPY"),
                Period(id: "a3", productId: "premium_monthly", start: at(2024, 3, 17, 10), end: at(2024, 4, 17, 10), currency: "JPY", endReason: .voluntary),
            ], episodes: [BillingEpisode(failedAt: at(2024, 2, 17, 10), graceEnd: at(2024, 3, 4, 10), outcome: .recovered(at: at(2024, 2, 20, 8)))],
            currencies: ["JPY"]),
            SubscriptionHistory(platform: .google, id: "B", periods: [
                Period(id: "GPA.b", productId: "premium_monthly", start: at(2024, 1, 31, 23), end: at(2024, 2, 29, 23), currency: "USD", endReason: .billingIssue),
                Period(id: "GPA.b..1", productId: "premium_monthly", start: at(2024, 3, 15, 12), end: at(2024, 4, 15, 12), currency: "USD", revokedAt: at(2024, 4, 1, 9)),
            ], episodes: [BillingEpisode(failedAt: at(2024, 2, 29, 23), graceEnd: at(2024, 3, 7, 23), outcome: .recovered(at: at(2024, 3, 15, 12)))],
            currencies: ["USD"]),
            SubscriptionHistory(platform: .apple, id: "C", periods: [
                Period(id: "c1", productId: "premium_weekly", start: at(2024, 2, 26, 6), end: at(2024, 3, 4, 6), currency: "USD"),
                Period(id: "c2", productId: "premium_weekly", start: at(2024, 3, 4, 6), end: at(2024, 3, 11, 6), currency: "USD", endReason: .billingIssue),
            ], episodes: [BillingEpisode(failedAt: at(2024, 3, 11, 6), graceEnd: at(2024, 3, 11, 6), outcome: .lost(at: at(2024, 5, 10, 6)))],
            currencies: ["USD"]),
        ]
    }

    static func tables() throws -> ReportTables { try engineTables(histories, asOf: asOf, prices: prices()) }
}

/// A deterministic population of a few hundred subscriptions over 18 months on both stores, with trials,
/// billing issues (recovered in grace, in retry, lost, open), voluntary churn, refunds, pauses, three
/// currencies and one product id that needs escaping: enough for every chart to have something to draw.
private enum SamplePopulation {
    static let asOf = at(2024, 6, 15, 12)
    static let oddProduct = "promo <b>&\"special\"'"

    /// SplitMix64: a seeded generator, so the sample is the same on every run.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
        mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
    }

    static func histories(count: Int = 320, seed: UInt64 = 20240101) -> [SubscriptionHistory] {
        var random = Random(state: seed)
        let products: [(id: String, days: Int64, prices: [String: Int64])] = [
            ("premium_monthly", 30, ["USD": 4_990_000, "EUR": 4_490_000, "JPY": 480_000_000]),
            ("premium_yearly", 365, ["USD": 39_990_000, "EUR": 35_990_000, "JPY": 3_900_000_000]),
            ("premium_weekly", 7, ["USD": 1_990_000, "EUR": 1_790_000, "JPY": 200_000_000]),
            (oddProduct, 30, ["USD": 2_990_000, "EUR": 2_490_000, "JPY": 300_000_000]),
        ]
        let currencies = ["USD", "USD", "EUR", "JPY"]
        let first = at(2023, 1, 1)
        return (0..<count).map { number in
            let platform: Platform = random.chance(55) ? .apple : .google
            let pick = random.below(100)
            let product = products[pick < 55 ? 0 : pick < 75 ? 1 : pick < 92 ? 2 : 3]
            let currency = currencies[random.below(currencies.count)]
            let price = product.prices[currency]
            let length = product.days * dayMillis
            var periods: [Period] = []
            var episodes: [BillingEpisode] = []
            var start = first + Millis(random.below(520)) * dayMillis + Millis(random.below(24)) * 3_600_000
            let id = "\(platform.rawValue)-\(number)"
            func period(_ end: Millis, trial: Bool = false, reason: EndReason = .unknown, revoked: Millis? = nil) -> Period {
                Period(id: "\(id).\(periods.count)", productId: product.id, start: start, end: end, isTrial: trial,
                       priceMicros: trial ? nil : price, currency: currency, revokedAt: revoked, endReason: reason)
            }
            if random.chance(40) {
                let end = start + 7 * dayMillis
                if random.chance(30) {
                    periods.append(period(end, trial: true, reason: .voluntary))
                    return SubscriptionHistory(platform: platform, id: id, periods: periods, currencies: [currency])
                }
                periods.append(period(end, trial: true))
                start = end
            }
            while start <= asOf {
                let end = start + length
                let roll = random.below(100)
                if roll < 8 {
                    periods.append(period(end, reason: .voluntary))
                    break
                } else if roll < 9 {
                    periods.append(period(end, revoked: start + 3 * dayMillis))
                    break
                } else if roll < 10, platform == .google {
                    periods.append(period(end, reason: .paused))
                    start = end + 60 * dayMillis
                } else if roll < 16 {
                    periods.append(period(end, reason: .billingIssue))
                    let grace = platform == .google || random.chance(50) ? Millis(random.below(3) * 7 + 3) * dayMillis : 0
                    let outcome = random.below(100)
                    if outcome < 60 {
                        let recovered = end + Millis(random.below(30) + 1) * dayMillis / 2
                        episodes.append(BillingEpisode(failedAt: end, graceEnd: end + grace, outcome: .recovered(at: recovered)))
                        start = recovered
                    } else {
                        episodes.append(BillingEpisode(failedAt: end, graceEnd: end + grace, outcome: .lost(at: end + 60 * dayMillis)))
                        break
                    }
                } else {
                    periods.append(period(end))
                    start = end
                }
            }
            return SubscriptionHistory(platform: platform, id: id, periods: periods, episodes: episodes, currencies: [currency])
        }
    }

    static func tables(reversed: Bool = false) throws -> ReportTables {
        let all = histories()
        return try engineTables(reversed ? all.reversed() : all, asOf: asOf)
    }

    static let ingest = IngestStatistics(files: 12, read: 5310, used: 5012, duplicate: 190, excluded: 101, quarantined: 7,
                                         excludedByReason: ["sandbox": 100, "test": 1],
                                         quarantinedByReason: ["bad_signature": 2, "malformed_json": 5],
                                         damagedFiles: [.init(file: "2024-05.tar.gz", offset: 10_240, reason: "truncated gzip")])
}

// MARK: - Reading the page back

/// An element of the page that shows a number: its `data-*` attributes and its text.
private struct PageFigure {
    var attributes: [String: String]
    var text: String
}

/// Every element with a `data-col` attribute, by a scan of the page text (the renderer writes attributes as
/// `name="value"` and figure elements hold text only).
private func pageFigures(_ html: String) -> [PageFigure] {
    var figures: [PageFigure] = []
    var rest = html[...]
    while let marker = rest.range(of: " data-col=\"") {
        guard let open = rest[..<marker.lowerBound].lastIndex(of: "<"),
              let close = rest[marker.upperBound...].firstIndex(of: ">") else { break }
        let tag = rest[open..<close]
        var attributes: [String: String] = [:]
        var scan = tag[...]
        while let equals = scan.range(of: "=\"") {
            let name = scan[..<equals.lowerBound].split(separator: " ").last.map(String.init) ?? ""
            let valueEnd = scan[equals.upperBound...].firstIndex(of: "\"") ?? scan.endIndex
            attributes[name] = unescape(String(scan[equals.upperBound..<valueEnd]))
            scan = valueEnd < scan.endIndex ? scan[scan.index(after: valueEnd)...] : scan[scan.endIndex...]
        }
        if tag.contains(" data-sum=") { attributes["data-sum"] = "" }
        let textStart = rest.index(after: close)
        let textEnd = rest[textStart...].firstIndex(of: "<") ?? rest.endIndex
        figures.append(PageFigure(attributes: attributes, text: unescape(String(rest[textStart..<textEnd]))))
        rest = rest[textEnd...]
    }
    return figures
}

private func unescape(_ text: String) -> String {
    text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
        .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
        .replacingOccurrences(of: "&amp;", with: "&")
}

/// What a figure should read, from the tables the CSV files are written from: the cell text, or the exact sum.
private func expectedText(_ figure: PageFigure, _ tables: [TableText]) -> String? {
    guard let name = figure.attributes["data-table"], let column = figure.attributes["data-col"],
          let table = tables.first(where: { $0.name == name }),
          let position = table.columns.firstIndex(of: column) else { return nil }
    let key = figure.attributes.compactMap { name, value -> (Int, String)? in
        guard name.hasPrefix("data-key-") else { return nil }
        let column = String(name.dropFirst("data-key-".count)).replacingOccurrences(of: "-", with: "_")
        return table.columns.firstIndex(of: column).map { ($0, value) }
    }
    let rows = table.rows.filter { row in key.allSatisfy { row[$0.0].text == $0.1 } }
    if figure.attributes["data-sum"] != nil {
        // Σ (data-col − data-minus) × data-times, exactly.
        let minus = figure.attributes["data-minus"].map { table.columns.firstIndex(of: $0) ?? -1 }
        let times = Decimal(string: figure.attributes["data-times"] ?? "1") ?? .nan
        let total = rows.reduce(Decimal(0)) { sum, row in
            let less = minus.map { $0 < 0 ? Decimal.nan : Decimal(string: row[$0].text) ?? .nan } ?? 0
            return sum + (Decimal(string: row[position].text) ?? .nan) - less
        } * times
        return Decimal(string: figure.text) == total ? figure.text : "sum \(total)"
    }
    guard rows.count == 1, key.count == HTMLKeyCount.of(name) else { return nil }
    let cell = rows[0][position].text
    switch figure.attributes["data-format"] {
    case nil: return cell
    case "percent":
        // × 100, rounded half away from zero to a tenth, computed here with Foundation's Decimal.
        guard !cell.isEmpty else { return "" }
        guard var value = Decimal(string: cell) else { return nil }
        value *= 100
        var rounded = Decimal()
        NSDecimalRound(&rounded, &value, 1, .plain)
        let text = String(format: "%.1f", NSDecimalNumber(decimal: rounded).doubleValue)
        return (text == "-0.0" ? "0.0" : text) + "%"
    case "numerator":
        // The count n whose n / denominator, written as the CSV writes rates, is the rate cell.
        guard let denominator = figure.attributes["data-denominator"].flatMap({ table.columns.firstIndex(of: $0) }),
              let n = Int(figure.text), let d = Int(rows[0][denominator].text) else { return nil }
        return (d == 0 ? "" : String(format: "%.6f", Double(n) / Double(d))) == cell ? figure.text : "not the numerator of \(cell)"
    default: return nil
    }
}

/// How many key columns each table has (cli.md: rows are sorted by their key columns).
private enum HTMLKeyCount {
    static func of(_ table: String) -> Int {
        ["subscriptions_monthly": 3, "revenue_monthly": 4, "mrr_movements": 3, "retention_cohorts": 4, "trial_conversion": 3,
         "grace_recovery": 2][table] ?? -1
    }
}

// MARK: - Tests

@Suite struct HTMLReportTests {
    static let zone = TimeZone(identifier: "UTC") ?? .gmt

    private func samplePage() throws -> (html: String, tables: ReportTables) {
        let tables = try SamplePopulation.tables()
        return (HTMLReport.render(tables, ingest: SamplePopulation.ingest, asOf: SamplePopulation.asOf, timeZone: Self.zone,
                                  generatedBy: "subledger test"), tables)
    }

    /// Every number tagged on the page is the CSV cell's text (or, for per-currency totals, their exact sum);
    /// every chart's table has figures, and every table's numbers appear.
    @Test func numbersEqualTheCSVCells() throws {
        let (html, tables) = try samplePage()
        let figures = pageFigures(html)
        #expect(figures.count > 500)
        let texts = tables.texts
        for figure in figures {
            let expected = expectedText(figure, texts)
            #expect(expected == figure.text, "\(figure.attributes) shows \(figure.text)")
        }
        let tagged = Set(figures.compactMap { $0.attributes["data-table"] })
        #expect(tagged == ["subscriptions_monthly", "revenue_monthly", "mrr_movements", "retention_cohorts", "trial_conversion",
                           "grace_recovery"])
        // Every retention rate and every grace row is on the page (their charts show the whole table).
        #expect(figures.filter { $0.attributes["data-col"] == "retention_rate" && $0.attributes["data-table"] == "retention_cohorts" }.count
                == tables.retentionCohorts.count)
        #expect(figures.filter { $0.attributes["data-col"] == "recovery_rate" && $0.attributes["data-table"] == "grace_recovery"
                && $0.attributes["data-key-month"] != nil }.count >= tables.graceRecovery.count)
        // Every mrr_movements row's amounts and counts are in the MRR chart's tables.
        #expect(figures.filter { $0.attributes["data-table"] == "mrr_movements" && $0.attributes["data-sum"] == nil }.count
                == tables.mrrMovements.count * 12)
    }

    @Test func everyChartIsPresentWithAnSVG() throws {
        let (html, _) = try samplePage()
        #expect(HTMLReport.chartIds == ["chart-active", "chart-churn", "chart-movement", "chart-products", "chart-retention",
                                        "chart-trials", "chart-grace", "chart-revenue", "chart-mrr"])
        let sections = html.components(separatedBy: "<section class=\"chart\" id=\"").dropFirst()
        #expect(sections.map { String($0.prefix { $0 != "\"" }) } == HTMLReport.chartIds)
        for section in sections {
            #expect(section.contains("<svg role=\"img\""), "\(section.prefix(30))")
            #expect(section.contains("<title") && section.contains("<desc") && section.contains("<table>") && section.contains("<rect"))
            #expect(!section.contains("data-empty"))
        }
        // Several panels where the brief asks for them: a heat map per platform and duration, a revenue panel per currency.
        #expect(html.components(separatedBy: "aria-labelledby=\"chart-retention-svg").count - 1 == 6)
        #expect(html.components(separatedBy: "aria-labelledby=\"chart-revenue-svg-").count - 1 == 3)
        #expect(html.contains("<h3>Revenue, EUR</h3>") && html.contains("<h3>Revenue, JPY</h3>") && html.contains("<h3>Revenue, USD</h3>"))
        // A waterfall per platform and currency: two stores × three currencies.
        #expect(html.components(separatedBy: "aria-labelledby=\"chart-mrr-svg-").count - 1 == 6)
        #expect(html.contains("<h3>MRR movements, apple, EUR</h3>") && html.contains("<h3>MRR movements, google, USD</h3>"))
    }

    /// A product id with markup characters appears escaped everywhere (tables, hover titles, legends).
    @Test func productIdsAreEscaped() throws {
        let (html, _) = try samplePage()
        #expect(!html.contains(SamplePopulation.oddProduct))
        #expect(!html.contains("<b>"))
        #expect(html.contains("promo &lt;b&gt;&amp;&quot;special&quot;&#39;"))
        #expect(html.contains("data-key-product-id=\"promo &lt;b&gt;&amp;&quot;special&quot;&#39;\""))
        let odd = pageFigures(html).filter { $0.attributes["data-key-product-id"] == SamplePopulation.oddProduct }
        #expect(!odd.isEmpty)
    }

    @Test func selfContainedWithoutScriptsOrNetwork() throws {
        let (html, _) = try samplePage()
        #expect(html.hasPrefix("<!DOCTYPE html>\n<html lang=\"en\">"))
        #expect(!html.lowercased().contains("<script"))
        #expect(!html.lowercased().contains("http"))
        // Fill patterns are the only url() references, and they point inside the page; no event handlers.
        #expect(html.components(separatedBy: "url(").dropFirst().allSatisfy { $0.hasPrefix("#") })
        #expect(html.range(of: #" on[a-z]+="#, options: .regularExpression) == nil)
        #expect(!html.contains("<link") && !html.contains("<img") && !html.contains("@import"))
        #expect(html.hasSuffix("</html>\n"))
    }

    /// The same histories in another order give the same page, byte for byte.
    @Test func deterministic() throws {
        let first = try SamplePopulation.tables()
        let second = try SamplePopulation.tables(reversed: true)
        let render = { (tables: ReportTables) in
            HTMLReport.render(tables, ingest: SamplePopulation.ingest, asOf: SamplePopulation.asOf, timeZone: Self.zone, generatedBy: "x")
        }
        #expect(render(first) == render(second))
    }

    /// No rows: every chart is a "no data" note, no SVG, and the header says there is no complete month.
    @Test func emptyTablesRenderNoDataNotes() throws {
        let html = HTMLReport.render(ReportTables(), ingest: IngestStatistics(), asOf: at(2024, 3, 1), timeZone: Self.zone,
                                     generatedBy: "x")
        #expect(!html.contains("<svg"))
        #expect(!html.contains("<table"))
        #expect(html.components(separatedBy: "data-empty=\"\"").count - 1 == HTMLReport.chartIds.count)
        #expect(html.components(separatedBy: "<p class=\"no-data\">No data: ").count - 1 == HTMLReport.chartIds.count)
        #expect(html.contains("No complete month: the reports have no rows for 2024-02"))
        #expect(pageFigures(html).isEmpty)
    }

    /// examples.md's rows with the page rendered as of mid-April: the headline is March's, every figure a CSV cell.
    @Test func headlineIsTheLastCompleteMonth() throws {
        let tables = try WorkedExample.tables()
        let html = HTMLReport.render(tables, ingest: IngestStatistics(files: 2, read: 30, used: 28, duplicate: 1, excluded: 0, quarantined: 1,
                                                                      warnings: ["timestamps_in_seconds": 3, "message_id_conflicts": 0]),
                                     asOf: at(2024, 4, 15, 12), timeZone: Self.zone, generatedBy: "x")
        #expect(html.contains("<h2>Last complete month: 2024-03</h2>"))
        #expect(html.contains("<span class=\"warn\" id=\"warnings\">warnings: timestamps_in_seconds 3</span>"))
        #expect(html.contains("<time id=\"as-of\" datetime=\"2024-04-15T12:00:00.000Z\">2024-04-15T12:00:00.000Z</time>"))
        #expect(html.contains("<span id=\"records-quarantined\" class=\"warn\">1 quarantined</span>"))
        let start = try #require(html.range(of: "id=\"headline\""))
        let headline = pageFigures(html[start.lowerBound...].components(separatedBy: "</section>")[0])
        let shown = headline.map { ($0.attributes["data-col"] ?? "", $0.attributes["data-key-platform"] ?? "", $0.attributes["data-key-currency"] ?? "", $0.text) }
        #expect(shown.map { "\($0.0) \($0.1) \($0.2) \($0.3)" } == [
            "active_end all  2",
            "mrr_end  JPY 480.00",
            "mrr_end  USD 4.99",
            "mrr_end  JPY 5760.00",
            "mrr_end  USD 59.88",
            "mrr_end  JPY 0.00",
            "mrr_end  USD -7.96",
            // The churn rate with the numbers it is made of: 2 of the 3 active at the start ended, 2 spells in all.
            "churn_rate all  66.7%",
            "churn_rate all  2",
            "active_start all  3",
            "churned all  2",
            "net_churn_rate all  33.3%",
            "churned all  2",
            "reactivated all  1",
            "active_start all  3",
            // A's episode started in March and is still open on April 15: no rate yet, and said to be provisional.
            "recovery_rate apple  ",
            "lost apple  0",
            "open apple  1",
        ])
        #expect(html.contains("still open: <strong>provisional</strong>"))
        #expect(html.contains("<dt>Trial conversion (trials started this month)</dt><dd class=\"none\">none this month</dd>"))
        for figure in headline { #expect(expectedText(figure, tables.texts) == figure.text) }
        // ARR is 12 × MRR; net new MRR is mrr_movements' mrr_end − mrr_start: C's weekly 7.96 USD churned in March.
        #expect(headline.filter { $0.attributes["data-times"] == "12" }.map { $0.attributes["data-table"] ?? "" } == ["revenue_monthly", "revenue_monthly"])
        #expect(headline.filter { $0.attributes["data-minus"] == "mrr_start" }.map { $0.attributes["data-table"] ?? "" } == ["mrr_movements", "mrr_movements"])
        #expect(html.contains("<dt>Net new MRR (end − start)</dt>"))
        // Hover titles carry the CSV text too.
        #expect(html.contains("<title>2024-03 · churn rate: 66.7%</title>"))
        #expect(html.contains("<title>2024-03 · involuntary: 2</title>"))
        // Revenue per currency is the exact sum of the CSV rows: USD in March = 1.99 (apple weekly) + 4.99 (google).
        let usdMarch = pageFigures(html).filter {
            $0.attributes["data-col"] == "gross" && $0.attributes["data-key-month"] == "2024-03" && $0.attributes["data-key-currency"] == "USD"
        }
        #expect(usdMarch.map(\.text) == ["6.98"])
        #expect(usdMarch.first?.attributes["data-sum"] != nil)
    }

    /// With `--currency USD --fx-rates`: a waterfall per platform in USD (the converted cells summed over the
    /// platform's currencies), and the headline's MRR, ARR and net new MRR also over every currency in USD. In
    /// April both subscriptions churn: 480 JPY × 0.0065 = 3.12 and 4.99 USD, so net new MRR is −8.11 USD.
    @Test func convertedWaterfallPerPlatform() throws {
        let fx = try FXRates(csv: """
            month,currency,rate_to_reporting_currency
            2024-01,JPY,0.0068
            2024-02,JPY,0.0067
            2024-03,JPY,0.0066
            2024-04,JPY,0.0065
            """)
        var engine = MetricsEngine(options: ReportOptions(asOf: WorkedExample.asOf, timeZone: Self.zone, prices: try WorkedExample.prices(),
                                                          reportingCurrency: "USD", fxRates: fx))
        for history in WorkedExample.histories { engine.add(history) }
        let tables = engine.finish()
        let html = HTMLReport.render(tables, ingest: IngestStatistics(), asOf: WorkedExample.asOf, timeZone: Self.zone, generatedBy: "x")
        #expect(html.components(separatedBy: "aria-labelledby=\"chart-mrr-svg-").count - 1 == 2)
        #expect(html.contains("<h3>MRR movements, apple in USD</h3>") && html.contains("<h3>MRR movements, google in USD</h3>"))
        let figures = pageFigures(html)
        for figure in figures { #expect(expectedText(figure, tables.texts) == figure.text, "\(figure.attributes) shows \(figure.text)") }
        let churned = figures.filter { $0.attributes["data-col"] == "churned_converted" && $0.attributes["data-key-month"] == "2024-04" }
        #expect(churned.map { "\($0.attributes["data-key-platform"] ?? "") \($0.text)" } == ["apple 3.12", "google 4.99"])
        let start = try #require(html.range(of: "id=\"headline\""))
        let headline = pageFigures(html[start.lowerBound...].components(separatedBy: "</section>")[0])
        #expect(headline.filter { $0.attributes["data-key-currency"] == nil && $0.attributes["data-table"] == "mrr_movements" }
            .map { "\($0.attributes["data-col"] ?? "") \($0.attributes["data-minus"] ?? "") \($0.attributes["data-times"] ?? "") \($0.text)" }
                == ["mrr_end_converted   0.00", "mrr_end_converted  12 0.00", "mrr_end_converted mrr_start_converted  -8.11"])
        #expect(html.contains("<span class=\"what\">all in USD</span>"))
    }

    /// What makes the figures understate is a banner at the top (issue 15, item 7): examples.md's subscriptions
    /// without the price list leave A's and C's Apple charges unpriced; with a month's FX rate missing, the
    /// amounts in the reporting currency are incomplete. The banner's counts are sums of the CSV column.
    @Test func bannersSayWhatTheFiguresLeaveOut() throws {
        let unpriced = try engineTables(WorkedExample.histories, asOf: WorkedExample.asOf)
        #expect(unpriced.unpricedTransactions > 0)
        let page = HTMLReport.render(unpriced, ingest: IngestStatistics(), asOf: WorkedExample.asOf, timeZone: Self.zone, generatedBy: "x")
        let banner = try #require(page.components(separatedBy: "<p class=\"banner\" id=\"warning-unpriced\"").dropFirst().first?
            .components(separatedBy: "</p>").first)
        let figures = pageFigures("<p" + banner + "</p>")
        #expect(figures.first?.text == String(unpriced.unpricedTransactions))
        #expect(figures.dropFirst().map { "\($0.attributes["data-key-platform"] ?? "") \($0.attributes["data-key-product-id"] ?? "") \($0.text)" }
                == unpriced.unpricedProducts.map { "\($0.platform.rawValue) \($0.productId) \($0.transactions)" })
        for figure in figures { #expect(expectedText(figure, unpriced.texts) == figure.text) }
        #expect(banner.contains("--prices FILE"))
        let count = unpriced.unpricedTransactions
        #expect(banner.contains("</span> transaction\(count == 1 ? "" : "s") had no known price"), "\(banner)")
        let priced = HTMLReport.render(try WorkedExample.tables(), ingest: IngestStatistics(), asOf: WorkedExample.asOf, timeZone: Self.zone,
                                       generatedBy: "x")
        #expect(!priced.contains("class=\"banner\""))

        // An introductory period with no stated price, priced from the list: the page names the product, and
        // carries no count of its own (no CSV column holds it; summary.json does).
        var offered = WorkedExample.histories
        let index = try #require(offered.firstIndex { $0.periods.contains { !$0.isTrial && $0.priceMicros == nil } })
        let period = try #require(offered[index].periods.firstIndex { !$0.isTrial && $0.priceMicros == nil })
        offered[index].periods[period].isIntroductory = true
        let listed = try engineTables(offered, asOf: WorkedExample.asOf, prices: try WorkedExample.prices())
        #expect(listed.listPricedOffers == 1)
        let listedPage = HTMLReport.render(listed, ingest: IngestStatistics(), asOf: WorkedExample.asOf, timeZone: Self.zone, generatedBy: "x")
        let listedBanner = try #require(listedPage.components(separatedBy: "<p class=\"banner\" id=\"warning-list-priced\"").dropFirst().first?
            .components(separatedBy: "</p>").first)
        let product = offered[index].platform.rawValue + " " + offered[index].periods[period].productId
        #expect(listedBanner.contains("<strong>Revenue and MRR may overstate.</strong>") && listedBanner.contains(product))
        #expect(pageFigures("<p" + listedBanner + "</p>").isEmpty)

        // A period assumed paid: the page names its product, and likewise carries no count of its own.
        var assumed = WorkedExample.histories
        let paidIndex = try #require(assumed.firstIndex { $0.platform == .google && $0.periods.contains { !$0.isTrial } })
        let paidPeriod = try #require(assumed[paidIndex].periods.firstIndex { !$0.isTrial })
        assumed[paidIndex].periods[paidPeriod].isAssumedPaid = true
        let assumedPage = HTMLReport.render(try engineTables(assumed, asOf: WorkedExample.asOf, prices: try WorkedExample.prices()),
                                            ingest: IngestStatistics(), asOf: WorkedExample.asOf, timeZone: Self.zone, generatedBy: "x")
        let assumedBanner = try #require(assumedPage.components(separatedBy: "<p class=\"banner\" id=\"warning-assumed-paid\"").dropFirst().first?
            .components(separatedBy: "</p>").first)
        #expect(assumedBanner.contains("google " + assumed[paidIndex].periods[paidPeriod].productId))
        #expect(pageFigures("<p" + assumedBanner + "</p>").isEmpty)
        #expect(!listedPage.contains("warning-assumed-paid"))

        // A Google proration period, the only unpriced transaction: revenue understates, MRR does not, and no
        // price list would price it, so the banner names its product and asks for no --prices; its counts are
        // still the CSV's.
        var prorated = assumed
        prorated[paidIndex].periods[paidPeriod].isAssumedPaid = false
        prorated[paidIndex].periods[paidPeriod].isProration = true
        let prorationTables = try engineTables(prorated, asOf: WorkedExample.asOf, prices: try WorkedExample.prices())
        #expect(prorationTables.prorationPeriods == 1 && prorationTables.unpricedTransactions == 1)
        let prorationPage = HTMLReport.render(prorationTables, ingest: IngestStatistics(), asOf: WorkedExample.asOf, timeZone: Self.zone,
                                              generatedBy: "x")
        let prorationBanner = try #require(prorationPage.components(separatedBy: "<p class=\"banner\" id=\"warning-unpriced\"").dropFirst()
            .first?.components(separatedBy: "</p>").first)
        #expect(prorationBanner.contains("<strong>Revenue understates.</strong>") && !prorationBanner.contains("--prices FILE"))
        #expect(prorationBanner.contains("Among them are Google proration periods, time a change of plan credited or an add-on aligned with its base plan (google "
                                         + prorated[paidIndex].periods[paidPeriod].productId + ")"), "\(prorationBanner)")
        for figure in pageFigures("<p" + prorationBanner + "</p>") { #expect(expectedText(figure, prorationTables.texts) == figure.text) }

        let fx = try FXRates(csv: "month,currency,rate_to_reporting_currency\n2024-01,JPY,0.0068\n2024-02,JPY,0.0067\n")
        var engine = MetricsEngine(options: ReportOptions(asOf: WorkedExample.asOf, timeZone: Self.zone, prices: try WorkedExample.prices(),
                                                          reportingCurrency: "USD", fxRates: fx))
        for history in WorkedExample.histories { engine.add(history) }
        let converted = HTMLReport.render(engine.finish(), ingest: IngestStatistics(), asOf: WorkedExample.asOf, timeZone: Self.zone,
                                          generatedBy: "x")
        #expect(converted.contains("id=\"warning-fx\" role=\"note\"><strong>Amounts in USD are incomplete.</strong> No FX rate for 2024-03 JPY, 2024-04 JPY:"))
    }

    /// A month is complete once its last millisecond is at or before the (inclusive) as-of time, in the reporting
    /// time zone: examples.md's as-of 2024-04-30T23:59:59.999Z completes April; one millisecond earlier it does not;
    /// 2024-03-01T00:00Z is still February in New York.
    @Test func lastCompleteMonthFollowsTheTimeZone() throws {
        let tables = try WorkedExample.tables()
        func month(_ asOf: Millis, _ zone: TimeZone) -> String? {
            let page = HTMLReport.render(tables, ingest: IngestStatistics(), asOf: asOf, timeZone: zone, generatedBy: "x")
            return page.range(of: "Last complete month: ").map { String(page[$0.upperBound...].prefix(7)) }
                ?? (page.contains("No complete month") ? "none" : nil)
        }
        let newYork = try #require(TimeZone(identifier: "America/New_York"))
        #expect(month(WorkedExample.asOf, Self.zone) == "2024-04")
        #expect(month(WorkedExample.asOf - 1, Self.zone) == "2024-03")
        #expect(month(at(2024, 3, 1), Self.zone) == "2024-02")
        #expect(month(at(2024, 3, 1), newYork) == "2024-01")
        #expect(month(at(2024, 3, 1, 4, 59, 59, ms: 999), newYork) == "2024-02")
        // April's headline: nobody active at the end, both churned; no episode or trial started in April.
        let april = HTMLReport.render(tables, ingest: IngestStatistics(), asOf: WorkedExample.asOf, timeZone: Self.zone, generatedBy: "x")
        let start = try #require(april.range(of: "id=\"headline\""))
        let figures = pageFigures(april[start.lowerBound...].components(separatedBy: "</section>")[0])
        #expect(figures.map { "\($0.attributes["data-col"] ?? "") \($0.attributes["data-key-currency"] ?? "") \($0.text)" }
                == ["active_end  0", "mrr_end USD 0.00", "mrr_end USD 0.00", "mrr_end JPY -480.00", "mrr_end USD -4.99",
                    "churn_rate  100.0%", "churn_rate  2", "active_start  2", "churned  2",
                    "net_churn_rate  100.0%", "churned  2", "reactivated  0", "active_start  2"])
        #expect(april.contains("<dt>Billing-issue recovery rate (episodes started this month)</dt><dd class=\"none\">none this month</dd>"))
        #expect(month(at(2023, 12, 31), Self.zone) == "none")
    }

    /// The rendered page and the CSV files side by side, as `report` writes them: the input of
    /// `scripts/browser-check.sh`. Written to `$SUBLEDGER_HTML_SAMPLE_DIR` when set (to look at it in a browser),
    /// else to a temporary directory that is removed.
    @Test func writesASampleReportDirectory() throws {
        let (html, tables) = try samplePage()
        let environment = ProcessInfo.processInfo.environment["SUBLEDGER_HTML_SAMPLE_DIR"]
        let directory = environment ?? FileManager.default.temporaryDirectory.appendingPathComponent("subledger-html-\(UUID().uuidString)").path
        defer { if environment == nil { try? FileManager.default.removeItem(atPath: directory) } }
        try ReportWriter(directory: directory).write(CSVReport.files(tables) + [(name: "report.html", contents: html)])
        #expect(try String(contentsOfFile: directory + "/report.html", encoding: .utf8) == html)
        #expect(FileManager.default.fileExists(atPath: directory + "/grace_recovery.csv"))
    }
}

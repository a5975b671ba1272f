import Facts
import Foundation
@testable import Reporting
import Testing

/// The small pieces the page is built from: exact decimal sums, escaping, axes.
@Suite struct HTMLPartsTests {
    /// Money totals are exact: summed as scaled integers, written like the CSV writes money.
    @Test func decimalSums() {
        #expect(HTMLDecimal.sum(["4.99", "-1.00", "480.00"], places: 2) == "483.99")
        #expect(HTMLDecimal.sum(["0.10", "0.20"], places: 2) == "0.30")  // 0.1 + 0.2 in binary floating point is not 0.3
        #expect(HTMLDecimal.sum([], places: 2) == "0.00")
        #expect(HTMLDecimal.sum(["-0.50"], places: 2) == "-0.50")
        #expect(HTMLDecimal.sum(["0.5", "7"], places: 2) == "7.50")
        #expect(HTMLDecimal.sum(["3", "12"], places: 0) == "15")
        #expect(HTMLDecimal.sum(["-4.99", "4.99"], places: 2) == "0.00")
        // Not a plain decimal with at most `places` decimals, or too large: no figure rather than a wrong one.
        #expect(HTMLDecimal.sum(["1.234"], places: 2) == nil)
        #expect(HTMLDecimal.sum([""], places: 2) == nil)
        #expect(HTMLDecimal.sum(["1e3"], places: 2) == nil)
        #expect(HTMLDecimal.sum(["1."], places: 2) == nil)
        #expect(HTMLDecimal.sum(["92233720368547758.07", "0.01"], places: 2) == nil)
        // Net new MRR (Σ end − Σ start) and ARR (12 × MRR), exactly.
        #expect(HTMLDecimal.sum(["4.99", "7.96"], minus: ["12.95", "0.00"], times: 1, places: 2) == "0.00")
        #expect(HTMLDecimal.sum(["0.00"], minus: ["7.96"], times: 1, places: 2) == "-7.96")
        #expect(HTMLDecimal.sum(["3.33", "3.34"], minus: [], times: 12, places: 2) == "80.04")
        #expect(HTMLDecimal.sum(["4.99"], minus: [""], times: 1, places: 2) == nil)
        #expect(HTMLDecimal.sum(["8000000000000000.00"], minus: [], times: 12, places: 2) == nil)
    }

    @Test func escaping() {
        #expect(HTMLText.escape(#"<a href="x">'&'</a>"#) == "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;")
        #expect(HTMLText.escape("tab\tline\nnul\u{0}esc\u{1B}c1\u{85}") == "tab\tline\nnul\u{FFFD}esc\u{FFFD}c1\u{FFFD}")
        #expect(HTMLText.escape("プレミアム €") == "プレミアム €")
        #expect(HTMLSource.cell("revenue_monthly", [("product_id", "a\"b")], "gross").attributes
                == #" data-table="revenue_monthly" data-key-product-id="a&quot;b" data-col="gross""#)
        #expect(HTMLSource.sum("revenue_monthly", where: [], "mrr_end").attributes
                == #" data-table="revenue_monthly" data-col="mrr_end" data-sum="""#)
        #expect(HTMLSource.sum("mrr_movements", where: [("month", "2024-03")], "mrr_end", minus: "mrr_start", times: 12).attributes
                == #" data-table="mrr_movements" data-key-month="2024-03" data-col="mrr_end" data-minus="mrr_start" data-times="12" data-sum="""#)
    }

    /// Axes start and end on round numbers, include zero, and count in whole steps for counts.
    @Test func axes() {
        let counts = HTMLAxis(values: [0, 3, 17], integer: true, top: 0, bottom: 100)
        #expect(counts.ticks == [0, 5, 10, 15, 20])
        let small = HTMLAxis(values: [0, 1, 2], integer: true, top: 0, bottom: 100)
        #expect(small.step == 1 && small.ticks.last == 2)
        let rates = HTMLAxis(values: [0.02, 0.31, -0.05], integer: false, top: 0, bottom: 100)
        #expect(rates.low < 0 && rates.high >= 0.31 && rates.step == 0.1)
        #expect(rates.y(rates.low) == 100 && rates.y(rates.high) == 0)
        let flat = HTMLAxis(values: [0, 0], integer: true, top: 0, bottom: 100)
        #expect(flat.high > flat.low)
        #expect(HTMLText.tick(0.15000000000000002, step: 0.05) == "0.15")
        #expect(HTMLText.tick(-0.0, step: 0.1) == "0.0")
        #expect(HTMLText.tick(20000, step: 5000) == "20000")
        #expect(HTMLText.coordinate(12.5) == "12.5" && HTMLText.coordinate(7) == "7.0" && HTMLText.coordinate(0.04) == "0.0")
        #expect(HTMLText.coordinate(-0.04) == "0.0" && HTMLText.coordinate(-3.26) == "-3.3" && HTMLText.coordinate(999.96) == "1000.0")
        #expect(HTMLText.coordinate(.nan) == "0" && HTMLText.coordinate(.infinity) == "0" && HTMLText.coordinate(1e300) == String(format: "%.1f", 1e300))
    }

    /// Gaps between months draw as months (zero revenue), not squeezed out.
    @Test func monthRanges() {
        #expect(HTMLSections.monthRange(["2024-02", "2023-11"]) == ["2023-11", "2023-12", "2024-01", "2024-02"])
        #expect(HTMLSections.monthRange(["2024-02", "garbage"]) == ["2024-02", "garbage"])
    }

    /// A waterfall month: seven bars (start, five steps, end), each step floating from where the last one ended,
    /// each with its CSV text on hover; a month without figures draws nothing.
    @Test func waterfallSteps() throws {
        func point(_ value: Double) -> HTMLPoint { HTMLPoint(value: value, hover: String(format: "%.2f", value) + " USD") }
        let chart = HTMLWaterfall(
            id: "w", title: "t", summary: "s", yLabel: "MRR", startName: "MRR at start", endName: "MRR at end",
            steps: [.init(name: "new", style: HTMLStyle(HTMLStyle.green), adds: true),
                    .init(name: "churned", style: HTMLStyle(HTMLStyle.vermillion, pattern: .hatch), adds: false)],
            categories: ["2024-01", "2024-02"],
            months: [HTMLWaterfall.Month(start: point(10), steps: [point(6), point(4)], end: point(12)), nil])
        let svg = chart.svg()
        let bars = svg.components(separatedBy: "<rect x=").dropFirst().filter { $0.contains("<title>") }
        #expect(bars.count == 4)
        #expect(bars.map { String($0[$0.range(of: "<title>")!.upperBound...].prefix { $0 != "<" }) } == [
            "2024-01 · MRR at start: 10.00 USD", "2024-01 · new: 6.00 USD", "2024-01 · churned: 4.00 USD", "2024-01 · MRR at end: 12.00 USD",
        ])
        func attribute(_ bar: String, _ name: String) throws -> Double {
            let start = try #require(bar.range(of: " \(name)=\"")).upperBound
            return try #require(Double(bar[start...].prefix { $0 != "\"" }))
        }
        // new runs from 10 up to 16, churned from 16 down to 12: its top is new's top, its bottom the end bar's top.
        let (start, new, churned, end) = (bars[0], bars[1], bars[2], bars[3])
        #expect(abs(try attribute(new, "y") + attribute(new, "height") - attribute(start, "y")) < 0.11)
        #expect(try attribute(churned, "y") == attribute(new, "y"))
        #expect(abs(try attribute(churned, "y") + attribute(churned, "height") - attribute(end, "y")) < 0.11)
        #expect(svg.contains("url(#w-p2)"))
    }

    @Test func heatMapColours() {
        #expect(HTMLHeatMap.colour(0) == "#F7FBFF")
        #expect(HTMLHeatMap.colour(0.5) == "#6BAED6")
        #expect(HTMLHeatMap.colour(1) == "#08306B")
        #expect(HTMLHeatMap.colour(7) == "#08306B")
        #expect(HTMLHeatMap.colour(.nan) == "#F7FBFF")
    }

    /// Rates as percentages, exactly from the CSV text: ×100, half away from zero to a tenth (issue 15, item 10).
    @Test func percentages() {
        #expect(HTMLPercent.text("0.057471") == "5.7%")
        #expect(HTMLPercent.text("0.057500") == "5.8%")  // half away from zero
        #expect(HTMLPercent.text("0.000499") == "0.0%" && HTMLPercent.text("0.000500") == "0.1%")
        // The digits after the tenth decide together: 0.0004949 is below half a tenth, whatever its last digit.
        #expect(HTMLPercent.text("0.000495") == "0.0%")
        #expect(HTMLPercent.text("1.000000") == "100.0%" && HTMLPercent.text("0.000000") == "0.0%")
        #expect(HTMLPercent.text("-0.012500") == "-1.3%" && HTMLPercent.text("-0.000100") == "0.0%")
        #expect(HTMLPercent.text("2.5") == "250.0%")
        #expect(HTMLPercent.text("") == "", "an undefined rate stays empty")
        #expect(HTMLPercent.text("n/a") == nil && HTMLPercent.text("1e-3") == nil && HTMLPercent.text("0.1234567891") == nil)
        #expect(HTMLPercent.whole("0.571428") == "57%" && HTMLPercent.whole("0.005000") == "1%" && HTMLPercent.whole("") == "")
        #expect(HTMLSource.cell("subscriptions_monthly", [("month", "2024-03")], "churn_rate").percent.attributes
                == #" data-table="subscriptions_monthly" data-key-month="2024-03" data-col="churn_rate" data-format="percent""#)
        #expect(HTMLSource.cell("subscriptions_monthly", [], "churn_rate").numerator(over: "active_start").attributes
                == #" data-table="subscriptions_monthly" data-col="churn_rate" data-format="numerator" data-denominator="active_start""#)
    }

    /// A weekly product's retention has a column per week: the map keeps readable cells, labels every column,
    /// repeats the cohort labels at its right end and scrolls sideways; a monthly one fits the page as before.
    @Test func wideHeatMapsScrollWithLabels() {
        func map(columns: Int) -> HTMLHeatMap {
            HTMLHeatMap(id: "h", title: "Retention, apple P1W", summary: "s", xLabel: "k", yLabel: "cohort",
                        columns: (0..<columns).map(String.init), rows: ["2024-01", "2024-02"],
                        cells: [(0..<columns).map { HTMLHeatCell(rate: 1 / Double($0 + 1), text: "\(100 / ($0 + 1))%", hover: "h", complete: true) },
                                (0..<columns).map { _ in nil }],
                        scaleLabel: "retention rate", incompleteLabel: "incomplete")
        }
        let weekly = map(columns: 104)
        #expect(weekly.scrolls)
        let html = weekly.html()
        #expect(html.hasPrefix("<div class=\"scroll\""))
        #expect(html.contains("class=\"wide\""))
        for k in [0, 1, 51, 103] { #expect(html.contains("text-anchor=\"middle\">\(k)</text>"), "column \(k) labelled") }
        #expect(html.components(separatedBy: ">2024-01</text>").count - 1 == 2, "the row label at both ends")
        #expect(html.contains(">100%</text>") && html.contains("retention rate 0%") && html.contains(">50%</text>"), "a legend in percent")
        let monthly = map(columns: 12)
        #expect(!monthly.scrolls)
        #expect(!monthly.html().contains("class=\"scroll\""))
    }

    /// The as-of in the report's zone with its offset, the same instant (issue 15, item 9).
    @Test func asOfInTheReportsZone() throws {
        let instant: Millis = 1_717_199_999_999  // 2024-05-31T23:59:59.999Z
        #expect(try #require(TimeZone(identifier: "UTC")).reportTime(instant) == "2024-05-31T23:59:59.999Z")
        #expect(try #require(TimeZone(identifier: "Asia/Tokyo")).reportTime(instant) == "2024-06-01T08:59:59.999+09:00")
        #expect(try #require(TimeZone(identifier: "America/New_York")).reportTime(instant) == "2024-05-31T19:59:59.999-04:00")
        #expect(try #require(TimeZone(identifier: "America/New_York")).reportTime(1_704_067_200_000) == "2023-12-31T19:00:00.000-05:00")
        #expect(try #require(TimeZone(identifier: "Asia/Kolkata")).reportTime(0) == "1970-01-01T05:30:00.000+05:30")
        #expect(Timestamp.rfc3339(-1, offsetSeconds: -3600) == "1969-12-31T22:59:59.999-01:00")
    }
}

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
}

/// A month-by-month waterfall as inline SVG: in each month's band, the level at its start (a bar from zero), then
/// each step floating from where the previous one ended (gains up, losses down), then the level at its end (a bar
/// from zero); thin connectors join each bar to the next. Drawn for MRR: start, new, expansion, reactivation,
/// contraction, churned, end.
///
/// Geometry is in SVG user units at the natural width of 1000; every bar carries a `<title>` with the CSV text
/// of its value (shown on hover). A month given as `nil` (no figures, e.g. no exchange rate) is left blank.
struct HTMLWaterfall: Sendable {
    /// One step between the start and the end: its name, how it is drawn, and whether it adds (up) or takes
    /// away (down).
    struct Step: Sendable {
        var name: String
        var style: HTMLStyle
        var adds: Bool
    }

    /// One month: the level at its start, the amount of each step (≥ 0, in ``HTMLWaterfall/steps`` order) and the
    /// level at its end, each with its hover text.
    struct Month: Sendable {
        var start: HTMLPoint
        var steps: [HTMLPoint]
        var end: HTMLPoint
    }

    /// Unique on the page: prefixes the ids of the SVG's title, description and patterns.
    var id: String
    var title: String
    /// The text summary for screen readers (the SVG's `<desc>`).
    var summary: String
    var yLabel: String
    var startName: String
    var endName: String
    var steps: [Step]
    /// Month labels (`YYYY-MM`), left to right.
    var categories: [String]
    /// One per category.
    var months: [Month?]

    private let width = 1000.0
    private let plotHeight = 260.0
    private static let startStyle = HTMLStyle(HTMLStyle.grey)
    private static let endStyle = HTMLStyle(HTMLStyle.black)

    func svg() -> String {
        let styles = [Self.startStyle] + steps.map(\.style) + [Self.endStyle]
        let legend = HTMLLegend(items: [.bar(startName, Self.startStyle)] + steps.map { .bar($0.name, $0.style) }
                                    + [.bar(endName, Self.endStyle)], width: width)
        let left = 72.0, right = width - 16
        let top = legend.height + 14
        let bottom = top + plotHeight
        let band = (right - left) / Double(max(categories.count, 1))
        let slot = band / Double(steps.count + 2)
        let rotate = band < 56
        let height = bottom + (rotate ? 70 : 44) + 18
        let levels = months.compactMap { $0 }.flatMap { month in
            month.steps.indices.reduce(into: [month.start.value]) { levels, index in
                levels.append(levels[levels.count - 1] + (steps[index].adds ? 1 : -1) * month.steps[index].value)
            } + [month.end.value]
        }
        let axis = HTMLAxis(values: levels, integer: false, top: top, bottom: bottom)

        var out = "<svg role=\"img\" aria-labelledby=\"\(id)-t \(id)-d\" width=\"\(HTMLText.coordinate(width))\" height=\"\(HTMLText.coordinate(height))\" viewBox=\"0 0 \(HTMLText.coordinate(width)) \(HTMLText.coordinate(height))\">"
        out += "<title id=\"\(id)-t\">" + HTMLText.escape(title) + "</title><desc id=\"\(id)-d\">" + HTMLText.escape(summary) + "</desc>"
        out += HTMLPatterns.defs(prefix: id, styles: styles)
        out += legend.svg(prefix: id)
        out += "<g class=\"grid\">"
        for tick in axis.ticks {
            let y = HTMLText.coordinate(axis.y(tick))
            out += "<line x1=\"\(HTMLText.coordinate(left))\" x2=\"\(HTMLText.coordinate(right))\" y1=\"\(y)\" y2=\"\(y)\"\(tick == 0 ? " class=\"zero\"" : "")/>"
            out += "<text x=\"\(HTMLText.coordinate(left - 6))\" y=\"\(y)\" dy=\"0.32em\" text-anchor=\"end\">\(HTMLText.tick(tick, step: axis.step))</text>"
        }
        out += "</g>"
        let middle = HTMLText.coordinate((top + bottom) / 2)
        out += "<text class=\"axis-title\" x=\"16\" y=\"\(middle)\" text-anchor=\"middle\" transform=\"rotate(-90 16 \(middle))\">" + HTMLText.escape(yLabel) + "</text>"
        out += "<text class=\"axis-title\" x=\"\(HTMLText.coordinate((left + right) / 2))\" y=\"\(HTMLText.coordinate(height - 6))\" text-anchor=\"middle\">month (start, movements, end)</text>"

        let every = max(1, Int((28.0 / band).rounded(.up)))
        for (index, category) in categories.enumerated() {
            let bandLeft = left + band * Double(index)
            if index > 0 {
                out += "<line class=\"band\" x1=\"\(HTMLText.coordinate(bandLeft))\" x2=\"\(HTMLText.coordinate(bandLeft))\" y1=\"\(HTMLText.coordinate(top))\" y2=\"\(HTMLText.coordinate(bottom))\" stroke=\"#e2e2e2\"/>"
            }
            guard index % every == 0 else { continue }
            let cx = HTMLText.coordinate(bandLeft + band / 2), cy = HTMLText.coordinate(bottom + 16)
            out += rotate
                ? "<text class=\"cat\" x=\"\(cx)\" y=\"\(cy)\" text-anchor=\"end\" transform=\"rotate(-45 \(cx) \(cy))\">"
                : "<text class=\"cat\" x=\"\(cx)\" y=\"\(cy)\" text-anchor=\"middle\">"
            out += HTMLText.escape(category) + "</text>"
        }

        out += "<g class=\"bars\">"
        for (index, month) in months.enumerated() {
            guard let month, index < categories.count else { continue }
            let bandLeft = left + band * Double(index)
            /// (from, to, hover, name, style index) of each bar, left to right.
            var bars = [(from: 0.0, to: month.start.value, hover: month.start.hover, name: startName, style: 0)]
            var level = month.start.value
            for (number, step) in steps.enumerated() where number < month.steps.count {
                let next = level + (step.adds ? 1 : -1) * month.steps[number].value
                bars.append((level, next, month.steps[number].hover, step.name, number + 1))
                level = next
            }
            bars.append((0, month.end.value, month.end.hover, endName, styles.count - 1))
            for (position, bar) in bars.enumerated() {
                let x = bandLeft + slot * Double(position) + slot * 0.12
                let y0 = axis.y(max(bar.from, bar.to)), y1 = axis.y(min(bar.from, bar.to))
                out += "<rect x=\"\(HTMLText.coordinate(x))\" y=\"\(HTMLText.coordinate(y0))\" width=\"\(HTMLText.coordinate(slot * 0.76))\" height=\"\(HTMLText.coordinate(max(y1 - y0, 0.5)))\" fill=\"\(HTMLPatterns.fill(prefix: id, index: bar.style, style: styles[bar.style]))\">"
                out += "<title>" + HTMLText.escape(categories[index] + " · " + bar.name + ": " + bar.hover) + "</title></rect>"
                // The connector: from this bar's top level (where the next one starts) across to the next bar.
                if position < bars.count - 1 {
                    let y = HTMLText.coordinate(axis.y(bar.to))
                    out += "<line x1=\"\(HTMLText.coordinate(x + slot * 0.76))\" x2=\"\(HTMLText.coordinate(x + slot))\" y1=\"\(y)\" y2=\"\(y)\" stroke=\"#555\" stroke-width=\"0.6\"/>"
                }
            }
        }
        return out + "</g></svg>"
    }
}

/// A value to draw and the text shown for it on hover: the CSV cell text, never a reformatted number.
struct HTMLPoint: Sendable {
    var value: Double
    var hover: String
}

/// A named series with one optional point per category of its chart.
struct HTMLSeries: Sendable {
    var name: String
    var style: HTMLStyle
    var points: [HTMLPoint?]
}

/// A category chart drawn as inline SVG: stacked bars (negative values stack downwards from zero), lines on the
/// same axis, and lines on a second axis at the right (rates). Categories are months, left to right.
///
/// Geometry is in SVG user units (1 unit = 1 CSS pixel at the natural width of ``width``); the page scales the
/// SVG down on narrow screens and in print. Each bar segment and line marker carries a `<title>` with the CSV
/// text of its value, which browsers show on hover.
struct HTMLChart: Sendable {
    /// Unique on the page: prefixes the ids of the SVG's title, description and patterns.
    var id: String
    var title: String
    /// The text summary for screen readers (the SVG's `<desc>`).
    var summary: String
    var xLabel: String
    var yLabel: String
    var categories: [String]
    var bars: [HTMLSeries] = []
    var lines: [HTMLSeries] = []
    /// Lines on the right axis: rates, in percent (`HTMLRows.percentPoint`), ticks labelled with `%`.
    var rateLines: [HTMLSeries] = []
    var rateLabel: String = ""
    /// Ticks of the left axis at whole numbers only (counts).
    var integerTicks = true
    /// Values the left axis must reach besides the chart's own: small multiples share one scale.
    var sharedValues: [Double] = []
    /// Values the right (rate) axis must reach besides the chart's own.
    var sharedRates: [Double] = []

    /// The natural width in SVG units (small multiples use less).
    var width = 1000.0
    private let plotHeight = 240.0

    func svg() -> String {
        let legend = HTMLLegend(items: bars.map { .bar($0.name, $0.style) } + (lines + rateLines).map { .line($0.name, $0.style) },
                                width: width)
        let directLabels = lines.count + rateLines.count <= 6 ? lines + rateLines : []
        let labelWidth = directLabels.map { Double(min($0.name.count, 28)) * 7.4 + 14 }.max() ?? 0
        let left = 72.0
        let right = width - max(16, (rateLines.isEmpty ? 0 : 52) + labelWidth)
        let top = legend.height + 14
        let band = (right - left) / Double(max(categories.count, 1))
        let rotate = band < 56
        let bottom = top + plotHeight
        let height = bottom + (rotate ? 70 : 44) + 18

        let primary = HTMLAxis(values: stackedExtremes() + lines.flatMap { $0.points.compactMap { $0?.value } } + sharedValues,
                               integer: integerTicks, top: top, bottom: bottom)
        let secondary = HTMLAxis(values: rateLines.flatMap { $0.points.compactMap { $0?.value } } + sharedRates, integer: false,
                                 top: top, bottom: bottom)
        func x(_ index: Int) -> Double { left + band * (Double(index) + 0.5) }

        var out = "<svg role=\"img\" aria-labelledby=\"\(id)-t \(id)-d\" width=\"\(HTMLText.coordinate(width))\" height=\"\(HTMLText.coordinate(height))\" viewBox=\"0 0 \(HTMLText.coordinate(width)) \(HTMLText.coordinate(height))\">"
        out += "<title id=\"\(id)-t\">" + HTMLText.escape(title) + "</title><desc id=\"\(id)-d\">" + HTMLText.escape(summary) + "</desc>"
        out += HTMLPatterns.defs(prefix: id, styles: bars.map(\.style))
        out += legend.svg(prefix: id)

        // Grid and axes.
        out += "<g class=\"grid\">"
        for tick in primary.ticks {
            let y = HTMLText.coordinate(primary.y(tick))
            out += "<line x1=\"\(HTMLText.coordinate(left))\" x2=\"\(HTMLText.coordinate(right))\" y1=\"\(y)\" y2=\"\(y)\"\(tick == 0 ? " class=\"zero\"" : "")/>"
            out += "<text x=\"\(HTMLText.coordinate(left - 6))\" y=\"\(y)\" dy=\"0.32em\" text-anchor=\"end\">\(HTMLText.tick(tick, step: primary.step))</text>"
        }
        if !rateLines.isEmpty {
            for tick in secondary.ticks {
                let y = HTMLText.coordinate(secondary.y(tick))
                out += "<text x=\"\(HTMLText.coordinate(right + 6))\" y=\"\(y)\" dy=\"0.32em\">\(HTMLText.tick(tick, step: secondary.step))%</text>"
            }
            out += axisTitle(rateLabel, x: right + 44, y: (top + bottom) / 2, rotated: 90)
        }
        out += "</g>"
        out += axisTitle(yLabel, x: 16, y: (top + bottom) / 2, rotated: -90)
        out += "<text class=\"axis-title\" x=\"\(HTMLText.coordinate((left + right) / 2))\" y=\"\(HTMLText.coordinate(height - 6))\" text-anchor=\"middle\">" + HTMLText.escape(xLabel) + "</text>"

        // Category labels: every one when they fit, else every k-th.
        let every = max(1, Int((28.0 / band).rounded(.up)))
        for (index, category) in categories.enumerated() where index % every == 0 {
            let cx = HTMLText.coordinate(x(index)), cy = HTMLText.coordinate(bottom + 16)
            out += rotate
                ? "<text class=\"cat\" x=\"\(cx)\" y=\"\(cy)\" text-anchor=\"end\" transform=\"rotate(-45 \(cx) \(cy))\">"
                : "<text class=\"cat\" x=\"\(cx)\" y=\"\(cy)\" text-anchor=\"middle\">"
            out += HTMLText.escape(category) + "</text>"
        }

        out += barsSVG(axis: primary, x: x, barWidth: band * 0.7)
        for series in lines { out += lineSVG(series, axis: primary, x: x) }
        for series in rateLines { out += lineSVG(series, axis: secondary, x: x) }
        out += directLabelsSVG(directLabels, x: x, primary: primary, secondary: secondary, at: right + (rateLines.isEmpty ? 6 : 58))
        return out + "</svg>"
    }

    /// The top of every positive stack and the bottom of every negative one.
    private func stackedExtremes() -> [Double] {
        var out: [Double] = []
        for index in categories.indices {
            var positive = 0.0, negative = 0.0
            for series in bars {
                guard index < series.points.count, let value = series.points[index]?.value else { continue }
                if value > 0 { positive += value } else { negative += value }
            }
            out += [positive, negative]
        }
        return out
    }

    private func barsSVG(axis: HTMLAxis, x: (Int) -> Double, barWidth: Double) -> String {
        var out = "<g class=\"bars\">"
        for index in categories.indices {
            var positive = 0.0, negative = 0.0
            for (number, series) in bars.enumerated() {
                guard index < series.points.count, let point = series.points[index], point.value != 0 else { continue }
                let from = point.value > 0 ? positive : negative
                let to = from + point.value
                if point.value > 0 { positive = to } else { negative = to }
                let y0 = axis.y(max(from, to)), y1 = axis.y(min(from, to))
                out += "<rect x=\"\(HTMLText.coordinate(x(index) - barWidth / 2))\" y=\"\(HTMLText.coordinate(y0))\" width=\"\(HTMLText.coordinate(barWidth))\" height=\"\(HTMLText.coordinate(max(y1 - y0, 0.5)))\" fill=\"\(HTMLPatterns.fill(prefix: id, index: number, style: series.style))\">"
                out += "<title>" + HTMLText.escape(categories[index] + " · " + series.name + ": " + point.hover) + "</title></rect>"
            }
        }
        return out + "</g>"
    }

    private func lineSVG(_ series: HTMLSeries, axis: HTMLAxis, x: (Int) -> Double) -> String {
        var path = ""
        var previous = false
        for (index, point) in series.points.enumerated() {
            guard let point else { previous = false; continue }
            path += (previous ? "L" : "M") + HTMLText.coordinate(x(index)) + " " + HTMLText.coordinate(axis.y(point.value))
            previous = true
        }
        var out = "<g class=\"line\"><path d=\"\(path)\" stroke=\"\(series.style.colour)\""
        out += series.style.dash.isEmpty ? "" : " stroke-dasharray=\"\(series.style.dash)\""
        out += "/>"
        for (index, point) in series.points.enumerated() {
            guard let point else { continue }
            out += HTMLMarker.svg(series.style, x: x(index), y: axis.y(point.value),
                                  title: categories[index] + " · " + series.name + ": " + point.hover)
        }
        return out + "</g>"
    }

    /// Each line's name beside its last point, pushed apart vertically so labels never overlap.
    private func directLabelsSVG(_ series: [HTMLSeries], x: (Int) -> Double, primary: HTMLAxis, secondary: HTMLAxis,
                                 at labelX: Double) -> String {
        var placed: [(y: Double, name: String, colour: String)] = []
        for line in series {
            guard let last = line.points.lastIndex(where: { $0 != nil }), let point = line.points[last] else { continue }
            let axis = rateLines.contains(where: { $0.name == line.name }) ? secondary : primary
            placed.append((axis.y(point.value), line.name, line.style.colour))
        }
        placed.sort { $0.y < $1.y }
        for index in placed.indices.dropFirst() where placed[index].y < placed[index - 1].y + 13 {
            placed[index].y = placed[index - 1].y + 13
        }
        return placed.map {
            "<text class=\"direct\" x=\"\(HTMLText.coordinate(labelX))\" y=\"\(HTMLText.coordinate($0.y))\" dy=\"0.32em\" fill=\"\(HTMLStyle.darkened($0.colour))\">" + HTMLText.escape(String($0.name.prefix(28))) + "</text>"
        }.joined()
    }

    private func axisTitle(_ text: String, x: Double, y: Double, rotated: Int) -> String {
        let cx = HTMLText.coordinate(x), cy = HTMLText.coordinate(y)
        return "<text class=\"axis-title\" x=\"\(cx)\" y=\"\(cy)\" text-anchor=\"middle\" transform=\"rotate(\(rotated) \(cx) \(cy))\">" + HTMLText.escape(text) + "</text>"
    }
}

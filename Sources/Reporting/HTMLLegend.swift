/// The legend row(s) at the top of a chart: a swatch (bar fill, or line with its marker) and the series name,
/// wrapped onto further rows when the chart is too narrow for one.
struct HTMLLegend: Sendable {
    enum Item: Sendable {
        case bar(String, HTMLStyle)
        case line(String, HTMLStyle)
        /// A bar swatch filled with a given `fill` value (e.g. a heat-map hatching), not a series style.
        case swatch(String, fill: String)
    }

    var items: [Item]
    var width: Double

    private static let rowHeight = 20.0
    private static let characterWidth = 6.6

    /// Positions of every item: (row, x).
    private var layout: [(row: Int, x: Double)] {
        var out: [(Int, Double)] = []
        var row = 0
        var x = 8.0
        for item in items {
            let itemWidth = 30 + Double(Self.name(item).count) * Self.characterWidth + 14
            if x + itemWidth > width - 8, x > 8 {
                row += 1
                x = 8
            }
            out.append((row, x))
            x += itemWidth
        }
        return out
    }

    /// Height taken at the top of the SVG (0 without items).
    var height: Double {
        guard let last = layout.last else { return 0 }
        return Double(last.row + 1) * Self.rowHeight + 4
    }

    func svg(prefix: String) -> String {
        var out = "<g class=\"legend\">"
        for (number, (item, place)) in zip(items, layout).enumerated() {
            let y = 6 + Double(place.row) * Self.rowHeight
            let x = place.x
            switch item {
            case .bar(_, let style):
                let fill = HTMLPatterns.fill(prefix: prefix, index: barIndex(of: number), style: style)
                out += "<rect x=\"\(HTMLText.coordinate(x))\" y=\"\(HTMLText.coordinate(y + 1))\" width=\"22\" height=\"12\" fill=\"\(fill)\"/>"
            case .line(_, let style):
                out += "<line x1=\"\(HTMLText.coordinate(x))\" x2=\"\(HTMLText.coordinate(x + 22))\" y1=\"\(HTMLText.coordinate(y + 7))\" y2=\"\(HTMLText.coordinate(y + 7))\" stroke=\"\(style.colour)\" stroke-width=\"2\"\(style.dash.isEmpty ? "" : " stroke-dasharray=\"\(style.dash)\"")/>"
                out += HTMLMarker.svg(style, x: x + 11, y: y + 7, title: Self.name(item))
            case .swatch(_, let fill):
                out += "<rect x=\"\(HTMLText.coordinate(x))\" y=\"\(HTMLText.coordinate(y + 1))\" width=\"22\" height=\"12\" fill=\"\(fill)\" stroke=\"#999\" stroke-width=\"0.5\"/>"
            }
            out += "<text x=\"\(HTMLText.coordinate(x + 28))\" y=\"\(HTMLText.coordinate(y + 7))\" dy=\"0.32em\">" + HTMLText.escape(Self.name(item)) + "</text>"
        }
        return out + "</g>"
    }

    /// The index of a bar item among the bar items: the pattern index its chart gave the series.
    private func barIndex(of number: Int) -> Int {
        items[..<number].filter { if case .bar = $0 { true } else { false } }.count
    }

    private static func name(_ item: Item) -> String {
        switch item {
        case .bar(let name, _), .line(let name, _), .swatch(let name, _): name
        }
    }
}

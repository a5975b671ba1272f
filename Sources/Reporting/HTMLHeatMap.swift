/// One cell of a heat map: a rate in [0, 1] for the colour (`nil`: undefined, drawn grey), the text written in
/// the cell (the rate in whole percent) and on hover (the CSV's figures), and whether the figure is final.
struct HTMLHeatCell: Sendable {
    var rate: Double?
    var text: String
    var hover: String
    /// `false` draws the cell hatched: the figure may still change (renewals in billing retry, pending trials).
    var complete: Bool
}

/// A grid of cells coloured by rate (a single-hue blue ramp, light to dark, so order reads without hue), rows top
/// to bottom, columns left to right, as inline SVG, with a legend of the ramp in percent. Cells keep a readable
/// width: a grid wider than the page (weekly retention has a column per week) is drawn at full size inside a
/// horizontal scroll area, every column labelled, the row labels repeated at its right end.
struct HTMLHeatMap: Sendable {
    var id: String
    var title: String
    var summary: String
    var xLabel: String
    var yLabel: String
    var columns: [String]
    var rows: [String]
    /// `cells[row][column]`; `nil` where the grid has no value (period not yet due).
    var cells: [[HTMLHeatCell?]]
    /// What the colour shows, for the legend (`retention rate`).
    var scaleLabel: String
    var incompleteLabel: String
    /// The legend of grey cells (rate undefined), shown only when there are some.
    var undefinedLabel = "undefined"

    /// The page's width for a chart: a wider grid scrolls.
    private let maximumWidth = 1000.0
    /// The narrowest cell: room for `100%`.
    static let minimumCellWidth = 36.0

    /// Whether the grid is wider than the page (the caller wraps it in a scroll area: see ``html()``).
    var scrolls: Bool { naturalWidth > maximumWidth }

    private var labelWidth: Double { min(260, Double(max(rows.map(\.count).max() ?? 0, yLabel.count)) * 6.6 + 16) }

    private var cellWidth: Double {
        max(Self.minimumCellWidth, min(46, (maximumWidth - labelWidth - 16) / Double(max(columns.count, 1))))
    }

    private var naturalWidth: Double { labelWidth + cellWidth * Double(columns.count) + 16 }

    /// The SVG, inside a horizontal scroll area when it is wider than the page.
    func html() -> String {
        scrolls ? "<div class=\"scroll\" tabindex=\"0\" role=\"region\" aria-label=\"" + HTMLText.escape(title + " (scrolls sideways)")
            + "\">" + svg() + "</div>" : svg()
    }

    func svg() -> String {
        // Room for the row labels and for the row title above them (it shares the line of the column labels).
        let left = labelWidth, cellHeight = 22.0
        let cellWidth = cellWidth
        let right = scrolls ? labelWidth : 0
        let width = max(left + cellWidth * Double(columns.count) + 16 + right, 560)
        let hasUndefined = cells.contains { $0.contains { $0 != nil && $0?.rate == nil } }
        let ramp: [HTMLLegend.Item] = [0, 0.25, 0.5, 0.75, 1].enumerated().map { index, rate in
            .swatch((index == 0 ? scaleLabel + " " : "") + "\(Int(rate * 100))%", fill: Self.colour(rate))
        }
        let legend = HTMLLegend(items: ramp + (hasUndefined ? [.swatch(undefinedLabel, fill: Self.undefined)] : [])
                                    + [.swatch(incompleteLabel, fill: "url(#\(id)-inc)")],
                                width: min(width, maximumWidth))
        let top = legend.height + 34
        let height = top + cellHeight * Double(rows.count) + 12
        var out = "<svg role=\"img\" aria-labelledby=\"\(id)-t \(id)-d\"\(scrolls ? " class=\"wide\"" : "") width=\"\(HTMLText.coordinate(width))\" height=\"\(HTMLText.coordinate(height))\" viewBox=\"0 0 \(HTMLText.coordinate(width)) \(HTMLText.coordinate(height))\">"
        out += "<title id=\"\(id)-t\">" + HTMLText.escape(title) + "</title><desc id=\"\(id)-d\">" + HTMLText.escape(summary) + "</desc>"
        out += HTMLPatterns.defs(prefix: id, styles: [])
        out += legend.svg(prefix: id)
        out += "<text class=\"axis-title\" x=\"\(HTMLText.coordinate(left))\" y=\"\(HTMLText.coordinate(top - 20))\">" + HTMLText.escape(xLabel) + "</text>"
        out += "<text class=\"axis-title\" x=\"6\" y=\"\(HTMLText.coordinate(top - 6))\">" + HTMLText.escape(yLabel) + "</text>"
        let columnLabelWidth = Double(columns.map(\.count).max() ?? 1) * 6.4 + 6
        let every = max(1, Int((columnLabelWidth / cellWidth).rounded(.up)))
        for (index, column) in columns.enumerated() where index % every == 0 {
            out += "<text class=\"cat\" x=\"\(HTMLText.coordinate(left + cellWidth * (Double(index) + 0.5)))\" y=\"\(HTMLText.coordinate(top - 6))\" text-anchor=\"middle\">" + HTMLText.escape(column) + "</text>"
        }
        let end = left + cellWidth * Double(columns.count)
        for (rowIndex, row) in rows.enumerated() {
            let y = top + cellHeight * Double(rowIndex)
            out += "<text class=\"cat\" x=\"\(HTMLText.coordinate(left - 6))\" y=\"\(HTMLText.coordinate(y + cellHeight / 2))\" dy=\"0.32em\" text-anchor=\"end\">" + HTMLText.escape(row) + "</text>"
            if scrolls {
                out += "<text class=\"cat\" x=\"\(HTMLText.coordinate(end + 6))\" y=\"\(HTMLText.coordinate(y + cellHeight / 2))\" dy=\"0.32em\">" + HTMLText.escape(row) + "</text>"
            }
            for (columnIndex, cell) in cells[rowIndex].enumerated() {
                guard let cell else { continue }
                let x = left + cellWidth * Double(columnIndex)
                let box = "x=\"\(HTMLText.coordinate(x))\" y=\"\(HTMLText.coordinate(y))\" width=\"\(HTMLText.coordinate(cellWidth - 1))\" height=\"\(HTMLText.coordinate(cellHeight - 1))\""
                out += "<g><title>" + HTMLText.escape(cell.hover) + "</title><rect \(box) fill=\"\(cell.rate.map(Self.colour) ?? Self.undefined)\"/>"
                if !cell.complete { out += "<rect \(box) fill=\"url(#\(id)-inc)\"/>" }
                if Double(cell.text.count) * 6.4 + 8 <= cellWidth, cellWidth >= 16 {
                    out += "<text class=\"cell\" x=\"\(HTMLText.coordinate(x + (cellWidth - 1) / 2))\" y=\"\(HTMLText.coordinate(y + cellHeight / 2))\" dy=\"0.32em\" text-anchor=\"middle\" fill=\"\((cell.rate ?? 0) > 0.5 ? "#fff" : "#111")\">" + HTMLText.escape(cell.text) + "</text>"
                }
                out += "</g>"
            }
        }
        return out + "</svg>"
    }

    /// The fill of a cell whose rate is undefined (a zero denominator).
    static let undefined = "#D9D9D9"

    /// `#F7FBFF` at 0 through `#6BAED6` to `#08306B` at 1 (ColorBrewer Blues end points), clamped.
    static func colour(_ rate: Double) -> String {
        let t = rate.isFinite ? min(max(rate, 0), 1) : 0
        let stops: [(Double, Double, Double)] = [(247, 251, 255), (107, 174, 214), (8, 48, 107)]
        let (a, b, f) = t < 0.5 ? (stops[0], stops[1], t * 2) : (stops[1], stops[2], (t - 0.5) * 2)
        func mix(_ p: Double, _ q: Double) -> Int { Int((p + (q - p) * f).rounded()) }
        return "#" + [mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2)].map { hex($0) }.joined()
    }

    private static func hex(_ value: Int) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[value / 16 % 16], digits[value % 16]])
    }
}

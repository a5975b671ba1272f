/// How one series is drawn: an Okabe–Ito colour (distinguishable with the common colour-vision deficiencies),
/// plus a fill pattern for bars and a dash and marker shape for lines, so no series is told apart by colour alone.
struct HTMLStyle: Sendable {
    enum Pattern: Sendable { case solid, hatch, dots, crosshatch }
    enum Marker: Sendable { case circle, square, triangle, diamond }

    /// `#RRGGBB`.
    var colour: String
    var pattern: Pattern
    /// SVG `stroke-dasharray`, empty for a solid line.
    var dash: String
    var marker: Marker

    init(_ colour: String, pattern: Pattern = .solid, dash: String = "", marker: Marker = .circle) {
        self.colour = colour
        self.pattern = pattern
        self.dash = dash
        self.marker = marker
    }

    /// The Okabe–Ito palette (Okabe & Ito 2008) without black, in an order where neighbours contrast.
    static let palette = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442"]

    static let orange = "#E69F00", skyBlue = "#56B4E9", green = "#009E73", yellow = "#F0E442", blue = "#0072B2"
    static let vermillion = "#D55E00", purple = "#CC79A7", black = "#000000", grey = "#8C8C8C"

    /// The `index`-th style of an open-ended list of series (products, currencies): colours cycle through the
    /// palette; dashes, markers and patterns cycle at other periods so two series never share all four.
    static func cycled(_ index: Int) -> HTMLStyle {
        let patterns: [Pattern] = [.solid, .hatch, .dots, .crosshatch]
        let dashes = ["", "6 3", "2 3", "8 3 2 3"]
        let markers: [Marker] = [.circle, .square, .triangle, .diamond]
        return HTMLStyle(palette[index % palette.count], pattern: patterns[(index / palette.count + index) % 4],
                         dash: dashes[index % 4], marker: markers[(index + index / 4) % 4])
    }
}

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

    /// The Okabe–Ito palette (Okabe & Ito 2008), plus a neutral grey for "other" and "open".
    static let orange = "#E69F00", skyBlue = "#56B4E9", green = "#009E73", yellow = "#F0E442", blue = "#0072B2"
    static let vermillion = "#D55E00", purple = "#CC79A7", black = "#000000", grey = "#8C8C8C"

    /// A darker shade of `colour` for text on white (yellow, sky blue and orange are too light to read as text).
    static func darkened(_ colour: String) -> String {
        switch colour {
        case yellow: "#8A7F00"
        case skyBlue: "#2A7FB0"
        case orange: "#A86F00"
        default: colour
        }
    }
}

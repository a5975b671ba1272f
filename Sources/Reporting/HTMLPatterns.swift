/// SVG fill patterns and line markers: the non-colour half of telling series apart (hatching, dots, marker
/// shapes), so the charts stay readable in greyscale print and for colour-blind readers.
enum HTMLPatterns {
    /// `<defs>` with one pattern per patterned style (ids `<prefix>-p<index>`), plus `<prefix>-inc`, the grey
    /// hatching that marks incomplete heat-map cells.
    static func defs(prefix: String, styles: [HTMLStyle]) -> String {
        var out = "<defs>"
        for (index, style) in styles.enumerated() where style.pattern != .solid {
            out += "<pattern id=\"\(prefix)-p\(index)\" patternUnits=\"userSpaceOnUse\" width=\"6\" height=\"6\">"
            out += "<rect width=\"6\" height=\"6\" fill=\"\(style.colour)\"/>"
            switch style.pattern {
            case .hatch: out += "<path d=\"M-1 1L1 -1M0 6L6 0M5 7L7 5\" stroke=\"#fff\" stroke-width=\"1.2\"/>"
            case .dots: out += "<circle cx=\"3\" cy=\"3\" r=\"1.2\" fill=\"#fff\"/>"
            case .crosshatch: out += "<path d=\"M0 3H6M3 0V6\" stroke=\"#fff\" stroke-width=\"1\"/>"
            case .solid: break
            }
            out += "</pattern>"
        }
        out += "<pattern id=\"\(prefix)-inc\" patternUnits=\"userSpaceOnUse\" width=\"6\" height=\"6\">"
        // A white and a dark stroke side by side: visible on the lightest and the darkest cells alike.
        out += "<path d=\"M-1 1L1 -1M0 6L6 0M5 7L7 5\" stroke=\"#fff\" stroke-width=\"1.4\"/>"
        out += "<path d=\"M-1 2L2 -1M1 6L6 1M5 8L8 5\" stroke=\"#333\" stroke-width=\"0.8\"/></pattern>"
        return out + "</defs>"
    }

    /// The `fill` value for the `index`-th style given to ``defs(prefix:styles:)``.
    static func fill(prefix: String, index: Int, style: HTMLStyle) -> String {
        style.pattern == .solid ? style.colour : "url(#\(prefix)-p\(index))"
    }
}

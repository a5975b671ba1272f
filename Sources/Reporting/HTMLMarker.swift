/// Line markers: a shape per style, with the hover title inside.
enum HTMLMarker {
    static func svg(_ style: HTMLStyle, x: Double, y: Double, title: String) -> String {
        let cx = HTMLText.coordinate(x), cy = HTMLText.coordinate(y)
        let open: String
        switch style.marker {
        case .circle:
            open = "<circle cx=\"\(cx)\" cy=\"\(cy)\" r=\"3.6\""
        case .square:
            open = "<rect x=\"\(HTMLText.coordinate(x - 3.3))\" y=\"\(HTMLText.coordinate(y - 3.3))\" width=\"6.6\" height=\"6.6\""
        case .triangle:
            open = "<path d=\"M\(cx) \(HTMLText.coordinate(y - 4.4))L\(HTMLText.coordinate(x + 4)) \(HTMLText.coordinate(y + 3))L\(HTMLText.coordinate(x - 4)) \(HTMLText.coordinate(y + 3))Z\""
        case .diamond:
            open = "<path d=\"M\(cx) \(HTMLText.coordinate(y - 4.6))L\(HTMLText.coordinate(x + 4.6)) \(cy)L\(cx) \(HTMLText.coordinate(y + 4.6))L\(HTMLText.coordinate(x - 4.6)) \(cy)Z\""
        }
        let tag = style.marker == .circle ? "circle" : style.marker == .square ? "rect" : "path"
        return open + " fill=\"\(style.colour)\" class=\"marker\"><title>" + HTMLText.escape(title) + "</title></\(tag)>"
    }
}

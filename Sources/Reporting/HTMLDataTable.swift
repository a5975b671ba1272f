/// The HTML `<table>` under a chart: the chart's numbers as text, each tagged with the CSV cell (or sum of
/// cells) it shows, so readers without the SVG, print, and the browser check all see the same figures.
struct HTMLDataTable: Sendable {
    enum Cell: Sendable {
        /// A row heading (month, platform, product): text only.
        case label(String)
        /// A number: the CSV text and where it comes from.
        case value(String, HTMLSource)
        /// No value for this combination (e.g. a platform that did not exist yet that month).
        case missing
    }

    var caption: String
    var header: [String]
    var rows: [[Cell]]

    func html() -> String {
        var out = "<div class=\"table-wrap\"><table><caption>" + HTMLText.escape(caption) + "</caption><thead><tr>"
        // Column names may wrap at their underscores (`recovered_in_grace` over three lines), so wide tables fit.
        for name in header {
            out += "<th scope=\"col\">" + HTMLText.escape(name).split(separator: "_", omittingEmptySubsequences: false).joined(separator: "_<wbr>") + "</th>"
        }
        out += "</tr></thead><tbody>"
        for row in rows {
            out += "<tr>"
            for cell in row {
                switch cell {
                case .label(let text): out += "<th scope=\"row\">" + HTMLText.escape(text) + "</th>"
                case .value(let text, let source): out += "<td\(source.attributes)>" + HTMLText.escape(text) + "</td>"
                case .missing: out += "<td class=\"missing\">–</td>"
                }
            }
            out += "</tr>"
        }
        return out + "</tbody></table></div>"
    }
}

/// One chart of the page: a heading, a text summary, one or more SVG panels and the data tables under them; or,
/// when its CSV table has no rows to show, a "no data" note in place of the panels.
///
/// The `<section>` carries `id` (e.g. `chart-churn`) and `data-source` (the CSV table it draws), which the
/// browser check uses to find every chart and to accept a note only where the CSV really is empty.
struct HTMLSection: Sendable {
    var id: String
    var title: String
    var source: String
    var summary: String
    /// SVG documents, each already rendered.
    var panels: [String]
    var tables: [HTMLDataTable]
    /// Extra paragraphs (already escaped HTML) after the tables.
    var notes: [String] = []

    /// The section for a table without rows.
    static func empty(id: String, title: String, source: String, reason: String) -> HTMLSection {
        HTMLSection(id: id, title: title, source: source, summary: reason, panels: [], tables: [])
    }

    func html() -> String {
        var out = "<section class=\"chart\" id=\"\(id)\" data-source=\"\(source)\"\(panels.isEmpty ? " data-empty=\"\"" : "")>"
        out += "<h2>" + HTMLText.escape(title) + "</h2>"
        if panels.isEmpty {
            return out + "<p class=\"no-data\">No data: " + HTMLText.escape(summary) + "</p></section>"
        }
        out += "<p class=\"summary\">" + HTMLText.escape(summary) + "</p>"
        out += "<figure>" + panels.joined() + "</figure>"
        for table in tables { out += table.html() }
        for note in notes { out += "<p class=\"note\">" + note + "</p>" }
        return out + "</section>"
    }
}

import SubscriptionMetrics

/// One report table read by column name: the page takes every number from here, as the CSV cell's text.
struct HTMLRows: Sendable {
    /// The CSV file stem (`subscriptions_monthly`, ...).
    let name: String
    /// The columns that identify a row (`cli.md`: "sorted by their key columns").
    let keyColumns: [String]
    let rows: [[String]]
    private let index: [String: Int]

    init(_ table: TableText) {
        self.init(name: table.name, columns: table.columns, rows: table.rows)
    }

    init(name: String, columns: [String], rows: [[Cell]]) {
        self.name = name
        keyColumns = Self.keys[name] ?? []
        self.rows = rows.map { $0.map(\.text) }
        index = Dictionary(columns.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Key columns per table, in column order.
    static let keys: [String: [String]] = [
        "subscriptions_monthly": ["month", "platform", "product_id"],
        "revenue_monthly": ["month", "platform", "product_id", "currency"],
        "mrr_movements": ["month", "platform", "currency"],
        "retention_cohorts": ["cohort_month", "platform", "duration", "period"],
        "trial_conversion": ["cohort_month", "platform", "product_id"],
        "grace_recovery": ["month", "platform"],
    ]

    /// The CSV text of `column` in `row`; empty for an unknown column.
    func text(_ row: [String], _ column: String) -> String {
        guard let position = index[column], position < row.count else { return "" }
        return row[position]
    }

    /// `column` of `row` as a number to draw; `nil` for an empty (undefined) cell.
    func value(_ row: [String], _ column: String) -> Double? {
        Double(text(row, column))
    }

    /// The value to draw and its hover text; `nil` for an undefined cell.
    func point(_ row: [String], _ column: String) -> HTMLPoint? {
        value(row, column).map { HTMLPoint(value: $0, hover: text(row, column)) }
    }

    /// A rate `column` of `row` to draw in percent (`0.057471` → 5.7471) with its percentage as the hover text;
    /// `nil` for an undefined rate.
    func percentPoint(_ row: [String], _ column: String) -> HTMLPoint? {
        value(row, column).map { HTMLPoint(value: $0 * 100, hover: percentText(row, column)) }
    }

    /// A rate `column` of `row` as a percentage with one decimal (`5.7%`); empty when undefined.
    func percentText(_ row: [String], _ column: String) -> String {
        HTMLPercent.text(text(row, column)) ?? text(row, column)
    }

    /// A page cell showing the rate `column` of `row` as a percentage, tagged with its source and format.
    func percentCell(_ row: [String], _ column: String) -> HTMLDataTable.Cell {
        .value(percentText(row, column), source(row, column).percent)
    }

    /// Where `column` of `row` sits in the CSV.
    func source(_ row: [String], _ column: String) -> HTMLSource {
        .cell(name, keyColumns.map { ($0, text(row, $0)) }, column)
    }

    /// A page cell showing `column` of `row`, tagged with its source.
    func cell(_ row: [String], _ column: String) -> HTMLDataTable.Cell {
        .value(text(row, column), source(row, column))
    }

    /// Rows whose columns equal every given value.
    func filter(_ conditions: [String: String]) -> [[String]] {
        rows.filter { row in conditions.allSatisfy { text(row, $0.key) == $0.value } }
    }

    /// The distinct values of `column`, in first-seen order (the tables' sort order).
    func distinct(_ column: String, in subset: [[String]]? = nil) -> [String] {
        var seen = Set<String>()
        return (subset ?? rows).map { text($0, column) }.filter { seen.insert($0).inserted }
    }
}

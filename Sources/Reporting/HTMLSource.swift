/// Where a number on the page comes from, written as `data-*` attributes on the element that shows it, so a
/// checker (the browser check, the tests) can find the CSV cell and compare the text.
///
/// - A **cell**: `data-table` (the CSV file stem), one `data-key-<column>` per key column (underscores written as
///   hyphens: `data-key-product-id`) and `data-col` (the CSV column). Exactly one CSV row has those key values.
/// - A **sum** (`data-sum` present): the exact decimal sum of `data-col` over every CSV row whose key columns
///   equal the `data-key-*` given (fewer than all key columns; none means every row). Used where the page totals
///   rows the CSV keeps apart, e.g. MRR per currency over products and platforms.
struct HTMLSource: Sendable {
    var table: String
    var key: [(column: String, value: String)]
    var column: String
    var isSum: Bool

    static func cell(_ table: String, _ key: [(column: String, value: String)], _ column: String) -> HTMLSource {
        HTMLSource(table: table, key: key, column: column, isSum: false)
    }

    static func sum(_ table: String, where key: [(column: String, value: String)], _ column: String) -> HTMLSource {
        HTMLSource(table: table, key: key, column: column, isSum: true)
    }

    /// The attributes, each preceded by a space.
    var attributes: String {
        var out = " data-table=\"" + HTMLText.escape(table) + "\""
        for part in key {
            out += " data-key-" + part.column.replacingUnderscores + "=\"" + HTMLText.escape(part.value) + "\""
        }
        out += " data-col=\"" + HTMLText.escape(column) + "\""
        return isSum ? out + " data-sum=\"\"" : out
    }
}

extension String {
    /// `product_id` → `product-id`: CSV column names as `data-*` attribute name parts.
    fileprivate var replacingUnderscores: String {
        String(map { $0 == "_" ? "-" : $0 })
    }
}

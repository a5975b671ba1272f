/// Where a number on the page comes from, written as `data-*` attributes on the element that shows it, so a
/// checker (the browser check, the tests) can find the CSV cell and compare the text.
///
/// - A **cell**: `data-table` (the CSV file stem), one `data-key-<column>` per key column (underscores written as
///   hyphens: `data-key-product-id`) and `data-col` (the CSV column). Exactly one CSV row has those key values.
/// - A **format** (`data-format`): how the page writes the CSV text. `percent`: a rate as a percentage with one
///   decimal (`0.057471` → `5.7%`, see `HTMLPercent`); `numerator`: a count `n` such that `n / data-denominator`
///   (a column of the same row) written as the CSV writes rates is the rate cell (the "5" of "5 of 87").
/// - A **sum** (`data-sum` present): the exact decimal sum of `data-col` over every CSV row whose key columns
///   equal the `data-key-*` given (fewer than all key columns; none means every row). Used where the page totals
///   rows the CSV keeps apart, e.g. MRR per currency over products and platforms. A sum may subtract another
///   column in each row (`data-minus`: Σ (`data-col` − `data-minus`), e.g. net new MRR = mrr_end − mrr_start) and
///   be multiplied by a whole factor (`data-times`: ARR = 12 × MRR).
struct HTMLSource: Sendable {
    var table: String
    var key: [(column: String, value: String)]
    var column: String
    var isSum: Bool
    /// For a sum: the column subtracted in each row.
    var minus: String? = nil
    /// For a sum: the whole factor it is multiplied by.
    var times: Int? = nil
    /// How the page writes the value, when not as the CSV text: `percent` or `numerator`.
    var format: String? = nil
    /// For `numerator`: the column of the same row that is the rate's denominator.
    var denominator: String? = nil

    /// The same source, the value written as a percentage.
    var percent: HTMLSource {
        var copy = self
        copy.format = "percent"
        return copy
    }

    /// The source of the numerator of the rate in `column` whose denominator is the row's `denominator` column.
    func numerator(over denominator: String) -> HTMLSource {
        var copy = self
        copy.format = "numerator"
        copy.denominator = denominator
        return copy
    }

    static func cell(_ table: String, _ key: [(column: String, value: String)], _ column: String) -> HTMLSource {
        HTMLSource(table: table, key: key, column: column, isSum: false)
    }

    static func sum(_ table: String, where key: [(column: String, value: String)], _ column: String,
                    minus: String? = nil, times: Int? = nil) -> HTMLSource {
        HTMLSource(table: table, key: key, column: column, isSum: true, minus: minus, times: times)
    }

    /// The attributes, each preceded by a space.
    var attributes: String {
        var out = " data-table=\"" + HTMLText.escape(table) + "\""
        for part in key {
            out += " data-key-" + part.column.replacingUnderscores + "=\"" + HTMLText.escape(part.value) + "\""
        }
        out += " data-col=\"" + HTMLText.escape(column) + "\""
        if let minus { out += " data-minus=\"" + HTMLText.escape(minus) + "\"" }
        if let times { out += " data-times=\"\(times)\"" }
        if let format { out += " data-format=\"" + HTMLText.escape(format) + "\"" }
        if let denominator { out += " data-denominator=\"" + HTMLText.escape(denominator) + "\"" }
        return isSum ? out + " data-sum=\"\"" : out
    }
}

extension String {
    /// `product_id` → `product-id`: CSV column names as `data-*` attribute name parts.
    fileprivate var replacingUnderscores: String {
        String(map { $0 == "_" ? "-" : $0 })
    }
}

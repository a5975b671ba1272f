import SubscriptionMetrics

/// The CSV files of `cli.md`: RFC 4180, UTF-8, a header row, `,` separators, `\n` line ends.
public enum CSVReport {
    /// One file per table (`subscriptions_monthly.csv`, `revenue_monthly.csv`, `mrr_movements.csv`,
    /// `retention_cohorts.csv`, `trial_conversion.csv`, `grace_recovery.csv`), in that order. The converted
    /// revenue and MRR movement columns are there when the tables were computed with a reporting currency.
    public static func files(_ tables: ReportTables) -> [(name: String, contents: String)] {
        tables.texts.map { table in (name: table.name + ".csv", contents: render(table)) }
    }

    /// One table as CSV text: the header, then one line per row.
    public static func render(_ table: TableText) -> String {
        var out = line(table.columns)
        for row in table.rows { out += line(row.map(\.text)) }
        return out
    }

    private static func line(_ fields: [String]) -> String {
        fields.map(quoted).joined(separator: ",") + "\n"
    }

    /// A field quoted when it holds a separator, a quote or a line break; quotes inside are doubled.
    static func quoted(_ field: String) -> String {
        guard field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) else { return field }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

extension String {
    /// Every occurrence of `target` replaced (Foundation-free).
    fileprivate func replacingOccurrences(of target: Character, with replacement: String) -> String {
        var out = ""
        for character in self { if character == target { out += replacement } else { out.append(character) } }
        return out
    }
}

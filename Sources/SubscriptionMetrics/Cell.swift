/// One value of a report row, already written as text. CSV, JSON and HTML all take their text from here, so the
/// three outputs always show the same digits; the case says how JSON types it.
public enum Cell: Sendable, Hashable {
    /// A string (months, platforms, product ids, currencies, durations): quoted in JSON.
    case text(String)
    /// A number already formatted (`3`, `4.99`, `0.666667`): a bare JSON number.
    case number(String)
    /// `true` / `false`.
    case boolean(Bool)
    /// An undefined value: the empty CSV cell, JSON `null`.
    case empty

    /// The CSV text (before RFC 4180 quoting).
    public var text: String {
        switch self {
        case .text(let s), .number(let s): return s
        case .boolean(let b): return b ? "true" : "false"
        case .empty: return ""
        }
    }

    static func count(_ n: Int) -> Cell { .number(String(n)) }
    static func money(_ m: Money) -> Cell { .number(m.text) }
    static func money(_ m: Money?) -> Cell { m.map { .number($0.text) } ?? .empty }
}

/// A table as the reports write it: its file name stem, its column names (CSV header, JSON keys) and its rows
/// as cells in column order.
public struct TableText: Sendable, Hashable {
    /// `subscriptions_monthly`, `revenue_monthly`, ...: the CSV file name without `.csv` and the summary.json key.
    public var name: String
    public var columns: [String]
    public var rows: [[Cell]]
}

import Facts
import Foundation

/// Calendar months of the reporting time zone as ms boundaries, computed once and searched by bisection.
///
/// A month is numbered `year × 12 + (month − 1)` (so consecutive months are consecutive integers). The table
/// covers the months from the earliest instant asked about through the as-of month; asking about an earlier
/// instant extends it backwards. Instants after the as-of time belong to no month: the as-of cuts everything.
struct MonthTable: Sendable {
    let asOf: Millis
    /// Gregorian calendar in the reporting time zone.
    let calendar: Calendar
    /// The month holding `asOf`: the last reported month.
    let lastMonth: Int
    private(set) var firstMonth: Int
    /// 1970-01 (or the as-of month, if earlier): the table never reaches further back.
    private let earliestMonth: Int
    /// `starts[i]` is the first instant of month `firstMonth + i`; the last element is the start of the month
    /// after `lastMonth`.
    private var starts: [Millis]

    init(asOf: Millis, timeZone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.asOf = asOf
        self.calendar = calendar
        let last = Self.monthNumber(of: asOf, calendar: calendar)
        lastMonth = last
        earliestMonth = min(1970 * 12, last)
        firstMonth = last + 1
        starts = [Self.start(of: last + 1, calendar: calendar)]
        extend(to: max(last - 24, earliestMonth))
    }

    /// The month holding `instant`, or `nil` when the instant is after the as-of time.
    mutating func month(of instant: Millis) -> Int? {
        guard instant <= asOf else { return nil }
        if instant < starts[0] {
            // Back to the January of the instant's year: the first month is then a function of the earliest instant
            // asked about, whatever the order of the others, so merged tables of slices are the one table of all.
            // Instants before 1970 are not real store data; they count in the earliest month kept.
            let month = Self.monthNumber(of: instant, calendar: calendar)
            extend(to: max((month >= 0 ? month / 12 : (month - 11) / 12) * 12, earliestMonth))
        }
        var low = 0
        var high = starts.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if starts[mid] <= instant { low = mid } else { high = mid - 1 }
        }
        return firstMonth + low
    }

    /// First instant (ms) of `month`, which must lie in `firstMonth ... lastMonth + 1`.
    func start(of month: Int) -> Millis {
        starts[month - firstMonth]
    }

    /// Extends the table back to `other`'s first month (same as-of and time zone), so that it covers every month
    /// either table covers: the table of the instants both were asked about.
    mutating func include(_ other: MonthTable) {
        extend(to: other.firstMonth)
    }

    /// `YYYY-MM`.
    static func label(_ month: Int) -> String {
        let year = month >= 0 ? month / 12 : (month - 11) / 12
        let monthOfYear = month - year * 12 + 1
        let yearText = String(year)
        return String(repeating: "0", count: max(0, 4 - yearText.count)) + yearText + (monthOfYear < 10 ? "-0" : "-") + String(monthOfYear)
    }

    /// Writes the first month: the rest follows from the as-of time and the time zone.
    func encode(to writer: inout PartialWriter) {
        writer.int(firstMonth)
    }

    /// The table `encode` wrote for `asOf` and `timeZone`; its first month must be one a table can reach.
    init(from reader: inout PartialReader, asOf: Millis, timeZone: TimeZone) throws(PartialStateError) {
        self.init(asOf: asOf, timeZone: timeZone)
        let first = try reader.int()
        guard earliestMonth <= first, first <= firstMonth else {
            throw .damaged("first month \(Self.label(first)) is outside the months a report can have")
        }
        extend(to: first)
    }

    private mutating func extend(to month: Int) {
        guard month < firstMonth else { return }
        let earlier = (month..<firstMonth).map { Self.start(of: $0, calendar: calendar) }
        starts.insert(contentsOf: earlier, at: 0)
        firstMonth = month
    }

    private static func monthNumber(of instant: Millis, calendar: Calendar) -> Int {
        let parts = calendar.dateComponents([.year, .month], from: date(instant))
        return (parts.year ?? 1970) * 12 + (parts.month ?? 1) - 1
    }

    private static func start(of month: Int, calendar: Calendar) -> Millis {
        let year = month >= 0 ? month / 12 : (month - 11) / 12
        let components = DateComponents(year: year, month: month - year * 12 + 1, day: 1)
        guard let date = calendar.date(from: components) else { return Millis.min }
        return millis(date)
    }

    static func date(_ instant: Millis) -> Date { Date(timeIntervalSince1970: Double(instant) / 1000) }

    static func millis(_ date: Date) -> Millis {
        let ms = (date.timeIntervalSince1970 * 1000).rounded()
        return ms.isFinite ? Millis(max(min(ms, 9e18), -9e18)) : 0
    }
}

import Foundation

/// Calendar arithmetic on epoch milliseconds (UTC unless a time zone is given), and the date formats the stores
/// write.
enum UTCCalendar {
    private static func calendar(_ timeZone: TimeZone) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar
    }

    private static let utc = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? .current

    /// `millis` plus `months` calendar months in `timeZone` (the day is clamped to the month's length).
    static func adding(months: Int, to millis: Int64, in timeZone: TimeZone = utc) -> Int64 {
        let date = Date(timeIntervalSince1970: Double(millis) / 1000)
        guard let result = calendar(timeZone).date(byAdding: .month, value: months, to: date) else { return millis }
        return Int64((result.timeIntervalSince1970 * 1000).rounded())
    }

    /// `millis` plus `days` calendar days in `timeZone`.
    static func adding(days: Int, to millis: Int64, in timeZone: TimeZone = utc) -> Int64 {
        let date = Date(timeIntervalSince1970: Double(millis) / 1000)
        guard let result = calendar(timeZone).date(byAdding: .day, value: days, to: date) else { return millis }
        return Int64((result.timeIntervalSince1970 * 1000).rounded())
    }

    /// The epoch ms of `year-month-01T00:00` in `timeZone`.
    static func monthStart(year: Int, month: Int, in timeZone: TimeZone = utc) -> Int64 {
        let components = DateComponents(year: year, month: month, day: 1, hour: 0, minute: 0, second: 0)
        guard let date = calendar(timeZone).date(from: components) else { return 0 }
        return Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// Civil fields of `millis` in UTC: (year, month, day, hour, minute, second, millisecond).
    static func civil(_ millis: Int64) -> (Int, Int, Int, Int, Int, Int, Int) {
        // Howard Hinnant's days-from-civil inverse; exact for all epoch ms the simulation uses.
        let ms = Int(((millis % 86_400_000) + 86_400_000) % 86_400_000)
        let days = Int((millis - Int64(ms)) / 86_400_000)
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day, ms / 3_600_000, (ms / 60_000) % 60, (ms / 1000) % 60, ms % 1000)
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    /// RFC 3339 with milliseconds, UTC: `2024-03-01T12:00:00.000Z`.
    static func rfc3339(_ millis: Int64) -> String {
        let (y, mo, d, h, mi, s, ms) = civil(millis)
        return "\(pad(y, 4))-\(pad(mo, 2))-\(pad(d, 2))T\(pad(h, 2)):\(pad(mi, 2)):\(pad(s, 2)).\(pad(ms, 3))Z"
    }

    /// Apple's verifyReceipt date string: `2024-01-17 10:00:00 Etc/GMT`.
    static func appleDate(_ millis: Int64) -> String {
        let (y, mo, d, h, mi, s, _) = civil(millis)
        return "\(pad(y, 4))-\(pad(mo, 2))-\(pad(d, 2)) \(pad(h, 2)):\(pad(mi, 2)):\(pad(s, 2)) Etc/GMT"
    }

    /// Apple's Pacific time date string: `2024-01-17 02:00:00 America/Los_Angeles` (fixed −8 h; the
    /// pipeline reads the `_ms` fields, this one only makes the payload look as Apple writes it).
    static func applePSTDate(_ millis: Int64) -> String {
        let (y, mo, d, h, mi, s, _) = civil(millis - 8 * 3_600_000)
        return "\(pad(y, 4))-\(pad(mo, 2))-\(pad(d, 2)) \(pad(h, 2)):\(pad(mi, 2)):\(pad(s, 2)) America/Los_Angeles"
    }

    /// `YYYY-MM-DD` of `millis` in UTC (daily archive names).
    static func day(_ millis: Int64) -> String {
        let (y, mo, d, _, _, _, _) = civil(millis)
        return "\(pad(y, 4))-\(pad(mo, 2))-\(pad(d, 2))"
    }

    /// `YYYY-MM` of `millis` in UTC.
    static func month(_ millis: Int64) -> String {
        let (y, mo, _, _, _, _, _) = civil(millis)
        return "\(pad(y, 4))-\(pad(mo, 2))"
    }
}

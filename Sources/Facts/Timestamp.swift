/// RFC 3339 text of an instant, computed with integer civil-date arithmetic (no formatter, no locale).
public enum Timestamp {
    /// `2024-04-30T23:59:59.999Z`: UTC with milliseconds. Total: every `Int64` gives a text (years beyond 9999
    /// with more digits, before year 0 with a sign), so that nothing a ledger holds can make rendering trap.
    public static func rfc3339(_ instant: Millis) -> String {
        let (days, ms) = split(instant)
        let (year, month, day) = civil(daysSinceEpoch: days)
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T" + pad(ms / 3_600_000, 2) + ":"
            + pad(ms / 60_000 % 60, 2) + ":" + pad(ms / 1000 % 60, 2) + "." + pad(ms % 1000, 3) + "Z"
    }

    /// Whole days since 1970-01-01 (floor) and the milliseconds into that day, without overflow for any `Int64`.
    private static func split(_ instant: Millis) -> (days: Int64, ms: Int64) {
        let dayMillis: Int64 = 86_400_000
        var days = instant / dayMillis
        var ms = instant % dayMillis
        if ms < 0 {
            days -= 1
            ms += dayMillis
        }
        return (days, ms)
    }

    /// `instant` moved by `months` calendar months in UTC, keeping the time of day; a day past the end of the
    /// target month is clamped to its last day (Jan 31 + 1 month = Feb 28/29). `nil` when the result does not
    /// fit in `Int64` milliseconds.
    public static func addingMonths(_ months: Int64, to instant: Millis) -> Millis? {
        let (days, ms) = split(instant)
        let (year, month, day) = civil(daysSinceEpoch: days)
        let (shifted, overflow) = (year * 12 + (month - 1)).addingReportingOverflow(months)
        guard !overflow, abs(shifted) < 12 * 300_000_000 else { return nil }
        let targetYear = shifted >= 0 ? shifted / 12 : (shifted - 11) / 12
        let targetMonth = shifted - targetYear * 12 + 1
        let lastDay: Int64
        switch targetMonth {
        case 2: lastDay = (targetYear % 4 == 0 && targetYear % 100 != 0) || targetYear % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: lastDay = 30
        default: lastDay = 31
        }
        let targetDays = daysFromCivil(year: targetYear, month: targetMonth, day: min(day, lastDay))
        let (scaled, scaleOverflow) = targetDays.multipliedReportingOverflow(by: 86_400_000)
        let (result, addOverflow) = scaled.addingReportingOverflow(ms)
        return scaleOverflow || addOverflow ? nil : result
    }

    /// `2024-05-01T08:59:59.999+09:00`: the instant as the wall clock of a zone `offsetSeconds` east of UTC
    /// shows it, with that offset (`Z` when it is 0), milliseconds kept: the same instant as ``rfc3339(_:)``.
    /// RFC 3339 offsets are whole minutes, so an offset with seconds (local mean time before 1972) is taken to
    /// the minute, for the wall time and the offset alike.
    public static func rfc3339(_ instant: Millis, offsetSeconds: Int) -> String {
        let minutes = Int64(offsetSeconds) / 60
        guard minutes != 0 else { return rfc3339(instant) }
        let (shifted, overflow) = instant.addingReportingOverflow(minutes * 60_000)
        guard !overflow else { return rfc3339(instant) }
        let local = rfc3339(shifted).dropLast()
        let magnitude = abs(minutes)
        return local + (minutes < 0 ? "-" : "+") + pad(magnitude / 60, 2) + ":" + pad(magnitude % 60, 2)
    }

    /// Gregorian date of a day count since 1970-01-01 (Howard Hinnant's `civil_from_days`).
    private static func civil(daysSinceEpoch: Int64) -> (Int64, Int64, Int64) {
        let z = daysSinceEpoch + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        if value < 0 { return "-" + pad(-value, width) }
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    public static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

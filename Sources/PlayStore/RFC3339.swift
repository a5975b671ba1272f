/// Parses RFC 3339 timestamps as Google's v2 resources send them (`2024-03-01T12:00:00Z`,
/// `2024-03-01T12:00:00.123456789Z`, `2024-03-01T13:00:00+01:00`) into ms UTC, without Foundation formatters
/// (this runs once per resource on the hot path). Fractions beyond milliseconds are truncated.
enum RFC3339 {
    static func millis(_ text: String) -> Int64? {
        let b = Array(text.utf8)
        func digits(_ from: Int, _ count: Int) -> Int64? {
            guard from + count <= b.count else { return nil }
            var value: Int64 = 0
            for i in from..<(from + count) {
                let d = b[i]
                guard d >= 0x30, d <= 0x39 else { return nil }
                value = value * 10 + Int64(d - 0x30)
            }
            return value
        }
        guard b.count >= 20, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"),
              b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t") || b[10] == UInt8(ascii: " "),
              b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"),
              let year = digits(0, 4), let month = digits(5, 2), let day = digits(8, 2),
              let hour = digits(11, 2), let minute = digits(14, 2), let second = digits(17, 2),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var index = 19
        var fractionMillis: Int64 = 0
        if index < b.count, b[index] == UInt8(ascii: ".") {
            index += 1
            var scale: Int64 = 100
            let begin = index
            while index < b.count, b[index] >= 0x30, b[index] <= 0x39 {
                fractionMillis += Int64(b[index] - 0x30) * scale
                scale /= 10
                index += 1
            }
            guard index > begin else { return nil }
        }
        guard index < b.count else { return nil }
        var offsetMinutes: Int64 = 0
        switch b[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            index += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard let oh = digits(index + 1, 2), index + 3 < b.count, b[index + 3] == UInt8(ascii: ":"),
                  let om = digits(index + 4, 2) else { return nil }
            offsetMinutes = (oh * 60 + om) * (b[index] == UInt8(ascii: "-") ? -1 : 1)
            index += 6
        default:
            return nil
        }
        guard index == b.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second - offsetMinutes * 60
        return seconds * 1_000 + fractionMillis
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}

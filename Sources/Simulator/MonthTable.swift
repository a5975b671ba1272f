import Foundation

/// Month boundaries of one reporting time zone, precomputed for a range of months so that finding the month
/// of an instant is a binary search (the truth calculator asks this millions of times for large runs).
struct MonthTable: Sendable {
    /// `starts[i]` is the epoch ms of the first instant of month `labels[i]` in the time zone.
    let starts: [Int64]
    let labels: [String]

    /// Months from December 2023 (so January 2024 in Tokyo and UTC are both covered) to `months + 3` later.
    init(timeZone: TimeZone, firstYear: Int = 2023, firstMonth: Int = 12, count: Int) {
        var starts: [Int64] = []
        var labels: [String] = []
        var year = firstYear
        var month = firstMonth
        for _ in 0..<count {
            starts.append(UTCCalendar.monthStart(year: year, month: month, in: timeZone))
            labels.append((year < 1000 ? "0" : "") + "\(year)-" + (month < 10 ? "0" : "") + "\(month)")
            month += 1
            if month == 13 { month = 1; year += 1 }
        }
        self.starts = starts
        self.labels = labels
    }

    /// Index of the month holding `millis` (clamped to the table).
    func index(of millis: Int64) -> Int {
        var low = 0
        var high = starts.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if starts[mid] <= millis { low = mid } else { high = mid - 1 }
        }
        return low
    }
}

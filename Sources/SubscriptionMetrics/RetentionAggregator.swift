import Facts
import Foundation

/// Builds `retention_cohorts`: per cohort (month of the first paid period's start × platform × that period's
/// duration) the number of members and how many non-revoked paid periods each had, as a histogram.
struct RetentionAggregator: Sendable {
    private struct Key: Hashable {
        var month: Int
        var platform: Platform
        var duration: BillingDuration
    }

    /// Members by their count of non-revoked paid periods.
    private var histograms: [Key: [Int: Int]] = [:]

    mutating func add(_ timeline: Timeline, prices: PriceList, months: inout MonthTable) {
        let history = timeline.history
        let paid = history.periods.filter { !$0.isTrial && $0.start <= timeline.asOf }
        guard let first = paid.min(by: { $0.start < $1.start }), let month = months.month(of: first.start) else { return }
        let duration = timeline.renewalTerm(of: first, prices: prices)
        let kept = paid.filter { timeline.revocation(of: $0) == nil }.count
        histograms[Key(month: month, platform: history.platform, duration: duration), default: [:]][kept, default: 0] += 1
    }

    /// A row for each period k whose due time (start of the month after the cohort month + k durations, in the
    /// reporting time zone) is at or before the as-of time.
    func rows(months: MonthTable) -> [RetentionCohortRow] {
        var rows: [RetentionCohortRow] = []
        for (key, histogram) in histograms {
            let size = histogram.values.reduce(0, +)
            let base = MonthTable.date(months.start(of: key.month + 1))
            var k = 0
            while let due = Self.add(key.duration, times: k, to: base, calendar: months.calendar), due <= months.asOf {
                let retained = histogram.reduce(0) { $0 + ($1.key >= k + 1 ? $1.value : 0) }
                rows.append(RetentionCohortRow(
                    cohortMonth: MonthTable.label(key.month), platform: key.platform, duration: key.duration,
                    cohortSize: size, period: k, retained: retained, complete: FullWidth.add(due, BillingEpisode.longestRetry) <= months.asOf))
                k += 1
            }
        }
        return rows.sorted {
            let lhs = [$0.cohortMonth, $0.platform.rawValue, $0.duration.description]
            let rhs = [$1.cohortMonth, $1.platform.rawValue, $1.duration.description]
            return lhs == rhs ? $0.period < $1.period : ByteOrder.precedes(lhs, rhs)
        }
    }

    /// `base` + k × `duration` as ms: calendar months for P*M and P*Y, 7-day weeks and days for P*W and P*D,
    /// all in the reporting time zone.
    private static func add(_ duration: BillingDuration, times k: Int, to base: Date, calendar: Calendar) -> Millis? {
        let (component, amount): (Calendar.Component, Int) = switch duration.unit {
        case .day: (.day, duration.count * k)
        case .week: (.day, 7 * duration.count * k)
        case .month: (.month, duration.count * k)
        case .year: (.month, 12 * duration.count * k)
        }
        return calendar.date(byAdding: component, value: amount, to: base).map(MonthTable.millis)
    }
}

extension RetentionAggregator {
    /// Adds `other`'s cohort members (other subscriptions) to these.
    mutating func merge(_ other: RetentionAggregator) {
        for (key, theirs) in other.histograms {
            histograms[key, default: [:]].merge(theirs, uniquingKeysWith: +)
        }
    }

    /// The cohorts in byte order of platform and duration, then month, each histogram by its period count.
    func encode(to writer: inout PartialWriter) {
        let keys = histograms.keys.sorted {
            $0.platform != $1.platform || $0.duration != $1.duration
                ? ByteOrder.precedes([$0.platform.rawValue, $0.duration.description], [$1.platform.rawValue, $1.duration.description])
                : $0.month < $1.month
        }
        writer.count(keys.count)
        for key in keys {
            let histogram = histograms[key] ?? [:]
            writer.platform(key.platform)
            writer.int(key.duration.count)
            writer.string(key.duration.unit.rawValue)
            writer.int(key.month)
            writer.count(histogram.count)
            for periods in histogram.keys.sorted() {
                writer.count(periods)
                writer.count(histogram[periods] ?? 0)
            }
        }
    }

    /// The cohorts `encode` wrote, for a report over `months`.
    init(from reader: inout PartialReader, months: MonthTable) throws(PartialStateError) {
        self.init()
        for _ in 0..<(try reader.count()) {
            let platform = try reader.platform()
            let count = try reader.int()
            // A duration of zero would never reach the as-of time: the rows would never end.
            guard let unit = BillingDuration.Unit(rawValue: try reader.string()), (1...100_000).contains(count) else {
                throw .damaged("a cohort duration is invalid")
            }
            let key = Key(month: try reader.month(in: months), platform: platform,
                          duration: BillingDuration(count: count, unit: unit))
            var histogram: [Int: Int] = [:]
            for _ in 0..<(try reader.count()) {
                let periods = try reader.tally()
                guard histogram.updateValue(try reader.tally(), forKey: periods) == nil else {
                    throw .damaged("a cohort histogram repeats a period count")
                }
            }
            guard histograms.updateValue(histogram, forKey: key) == nil else { throw .damaged("a cohort is written twice") }
        }
    }
}

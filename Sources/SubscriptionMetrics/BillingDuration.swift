/// The length of a subscription period as ISO 8601 writes it (`P1W`, `P1M`, `P3M`, `P1Y`, `P7D`): the unit
/// of retention cohorts and of MRR normalisation.
public struct BillingDuration: Sendable, Hashable, CustomStringConvertible {
    /// The ISO 8601 unit letter: days, weeks, months, years.
    public enum Unit: String, Sendable, Hashable {
        case day = "D", week = "W", month = "M", year = "Y"
    }

    public var count: Int
    public var unit: Unit

    public init(count: Int, unit: Unit) {
        self.count = count
        self.unit = unit
    }

    /// Parses `P<n>D`, `P<n>W`, `P<n>M`, `P<n>Y` with n ≥ 1; `nil` otherwise.
    public init?(iso text: String) {
        let upper = text.uppercased()
        guard upper.count >= 3, upper.first == "P", let last = upper.last, let unit = Unit(rawValue: String(last)),
              let count = Int(upper.dropFirst().dropLast()), count >= 1, count <= 10_000 else { return nil }
        self.init(count: count, unit: unit)
    }

    /// ISO 8601 text, e.g. `P1M`.
    public var description: String { "P\(count)\(unit.rawValue)" }

    /// The duration a period of `length` ms most likely was sold as (DESIGN.md): within ±2 days of 7 → P1W,
    /// ±3 of 30 → P1M, ±2 of 60 → P2M, ±3 of 91 → P3M, ±2 of 182 → P6M, ±2 of 365 → P1Y, else `P<n>D` (n the
    /// rounded days, at least 1). A month runs 28 days in February and three months 89 from February to April; a
    /// period placed at the notification or fetch that showed it starts a little after its charge, so it may run
    /// a little less: ±3 keeps such a month a month.
    public static func inferred(lengthMillis length: Int64) -> BillingDuration {
        let days = Double(length) / 86_400_000
        let known: [(days: Double, slack: Double, duration: BillingDuration)] = [
            (7, 2, .init(count: 1, unit: .week)), (30, 3, .init(count: 1, unit: .month)), (60, 2, .init(count: 2, unit: .month)),
            (91, 3, .init(count: 3, unit: .month)), (182, 2, .init(count: 6, unit: .month)), (365, 2, .init(count: 1, unit: .year)),
        ]
        for candidate in known where abs(days - candidate.days) <= candidate.slack { return candidate.duration }
        let rounded = days.rounded()
        return BillingDuration(count: rounded.isFinite ? max(1, Int(min(rounded, 100_000))) : 1, unit: .day)
    }

    /// Twelve times the monthly amount of `micros` charged per this duration (DESIGN.md "Numbers"): P1W ×48
    /// (×4 a month), P1M ×12, P2M ×6, P3M ×4, P6M ×2, P1Y ×1, any other length ×12×30/days, rounded half away
    /// from zero. Twelfths keep sums exact; the report divides by 12 once at the end.
    func monthlyTwelfths(ofMicros micros: Int64) -> Int64 {
        switch (unit, count) {
        case (.week, 1): return FullWidth.multiplyDivideRounded(micros, 48, 1)
        case (.month, let n) where 12 % n == 0: return FullWidth.multiplyDivideRounded(micros, Int64(12 / n), 1)
        case (.year, 1): return micros
        default: return FullWidth.multiplyDivideRounded(micros, 12 * 30, Int64(approximateDays))
        }
    }

    /// The fewest whole days a period of this duration lasts: a month at least 28 days (n months 30 × n - 3),
    /// a year 365.
    var shortestDays: Int64 {
        switch unit {
        case .day: return Int64(count)
        case .week: return 7 * Int64(count)
        case .month: return count == 1 ? 28 : 30 * Int64(count) - 3
        case .year: return 365 * Int64(count)
        }
    }

    /// Days in this duration, months counted as 30 and years as 365 (only used for "other lengths").
    private var approximateDays: Int {
        switch unit {
        case .day: return count
        case .week: return 7 * count
        case .month: return 30 * count
        case .year: return 365 * count
        }
    }
}

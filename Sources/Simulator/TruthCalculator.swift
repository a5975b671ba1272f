import Foundation

/// A direct implementation of metrics.md (with DESIGN.md's decisions) over the simulator's own timelines.
///
/// It shares no code with the pipeline's `Metrics`: the end-to-end test compares the two. Feed it every
/// subscription with `add(_:)` (memory stays proportional to the number of output rows and billing episodes),
/// then read `tables()`.
struct TruthCalculator {
    /// One report configuration: the reporting time zone and the as-of instant (ms UTC).
    struct Scenario: Sendable {
        var name: String
        var timeZoneIdentifier: String
        var asOf: Int64
    }

    let scenario: Scenario
    /// ISO 8601 duration of each product (`prices.csv`), by product id.
    let durations: [String: String]
    private let months: MonthTable
    private let timeZone: TimeZone
    /// Index in `months` of the month holding as-of.
    private let lastMonth: Int

    private struct MonthlyKey: Hashable { var month: Int; var platform: String; var product: String }
    private struct MonthlyCounts {
        var activeStart = 0, new = 0, reactivated = 0, changesIn = 0, changesOut = 0
        var voluntary = 0, involuntary = 0, refund = 0, paused = 0, other = 0
        var activeEnd = 0, churnedFromStart = 0, trialsEnd = 0
        var churned: Int { voluntary + involuntary + refund + paused + other }

        mutating func add(_ o: MonthlyCounts, keepChanges: Bool) {
            activeStart += o.activeStart; new += o.new; reactivated += o.reactivated
            if keepChanges { changesIn += o.changesIn; changesOut += o.changesOut }
            voluntary += o.voluntary; involuntary += o.involuntary; refund += o.refund; paused += o.paused
            other += o.other; activeEnd += o.activeEnd; churnedFromStart += o.churnedFromStart
            trialsEnd += o.trialsEnd
        }
    }
    private struct RevenueKey: Hashable { var month: Int; var platform: String; var product: String; var currency: String }
    private struct RevenueSums { var gross: Int64 = 0, refunds: Int64 = 0, transactions = 0, refunded = 0, unpriced = 0, mrr12: Int64 = 0 }
    private struct CohortKey: Hashable { var month: Int; var platform: String; var duration: String }
    private struct TrialKey: Hashable { var month: Int; var platform: String; var product: String }
    private struct TrialCounts { var trials = 0, converted = 0, abandoned = 0, pending = 0 }
    private struct GraceKey: Hashable { var month: Int; var platform: String }
    private struct GraceCounts {
        var episodes = 0, withGrace = 0, inGrace = 0, inRetry = 0, lost = 0, open = 0
        var recoveryMillis: [Int64] = []
    }

    private var monthly: [MonthlyKey: MonthlyCounts] = [:]
    /// First month with a period start, by "platform|product", "platform|all" and "all|all".
    private var firstMonth: [String: Int] = [:]
    private var revenue: [RevenueKey: RevenueSums] = [:]
    /// Cohort → histogram of the number of non-revoked paid periods per member.
    private var cohorts: [CohortKey: [Int: Int]] = [:]
    private var trials: [TrialKey: TrialCounts] = [:]
    private var grace: [GraceKey: GraceCounts] = [:]
    private var movements = MRRMovementTruth()

    init(scenario: Scenario, durations: [String: String], monthCount: Int) {
        self.scenario = scenario
        self.durations = durations
        let zone = TimeZone(identifier: scenario.timeZoneIdentifier) ?? TimeZone(secondsFromGMT: 0) ?? .current
        self.timeZone = zone
        self.months = MonthTable(timeZone: zone, count: monthCount + 6)
        self.lastMonth = months.index(of: scenario.asOf)
    }

    // MARK: - One subscription

    private struct Interval {
        var start: Int64
        var end: Int64
        /// Index of the period granting it (for grace: the period it follows).
        var period: Int
        var isGrace: Bool
    }

    private struct Spell {
        var start: Int64
        var end: Int64
        var intervals: [Interval]
    }

    /// Adds one subscription's contribution to every table.
    mutating func add(_ subscription: TimelineSubscription) {
        let asOf = scenario.asOf
        let platform = subscription.platform.rawValue
        let periods = subscription.periods.filter { $0.start <= asOf }.sorted { $0.start < $1.start }
        func revocation(_ p: TimelinePeriod) -> Int64? {
            guard let r = p.revokedAt, r <= asOf else { return nil }
            return r
        }
        func effectiveEnd(_ p: TimelinePeriod) -> Int64 { revocation(p).map { min($0, p.end) } ?? p.end }

        // Episodes as known at as-of: outcomes after it are open.
        struct Episode { var start: Int64; var graceEnd: Int64; var recovered: Int64?; var lost: Int64? }
        let episodes: [Episode] = subscription.episodes.filter { $0.start <= asOf }.map { e in
            switch e.outcome {
            case .recovered(let t): return Episode(start: e.start, graceEnd: e.graceEnd, recovered: t <= asOf ? t : nil, lost: nil)
            case .lost(let l): return Episode(start: e.start, graceEnd: e.graceEnd, recovered: nil, lost: l <= asOf ? l : nil)
            }
        }

        // Period starts open rows from their month on.
        for p in periods {
            let m = months.index(of: p.start)
            for key in ["\(platform)|\(p.product)", "\(platform)|all", "all|all"] {
                if let known = firstMonth[key], known <= m { continue }
                firstMonth[key] = m
            }
        }

        // Intervals of paid and trial state.
        var paid: [Interval] = []
        var trial: [Interval] = []
        for (index, p) in periods.enumerated() {
            let end = effectiveEnd(p)
            guard end > p.start else { continue }
            let interval = Interval(start: p.start, end: end, period: index, isGrace: false)
            if p.trial { trial.append(interval) } else { paid.append(interval) }
        }
        for e in episodes where e.graceEnd > e.start {
            guard let index = periods.firstIndex(where: { revocation($0) == nil && $0.end == e.start }) else { continue }
            let end = min(e.graceEnd, e.recovered ?? Int64.max)
            guard end > e.start else { continue }
            let interval = Interval(start: e.start, end: end, period: index, isGrace: true)
            if periods[index].trial { trial.append(interval) } else { paid.append(interval) }
        }
        let paidSpells = TruthCalculator.spells(paid)
        let trialSpells = TruthCalculator.spells(trial)

        func product(in spell: Spell, at instant: Int64) -> String {
            let covering = spell.intervals.last { $0.start <= instant && instant < $0.end } ?? spell.intervals[0]
            return periods[covering.period].product
        }
        func boundary(_ k: Int) -> Int64 { k > lastMonth ? asOf + 1 : months.starts[k] }

        // subscriptions_monthly
        for (spellIndex, spell) in paidSpells.enumerated() {
            let startMonth = months.index(of: spell.start)
            let firstProduct = periods[spell.intervals[0].period].product
            if spellIndex == 0 {
                monthly[MonthlyKey(month: startMonth, platform: platform, product: firstProduct), default: .init()].new += 1
            } else {
                monthly[MonthlyKey(month: startMonth, platform: platform, product: firstProduct), default: .init()].reactivated += 1
            }
            // Product changes inside the spell.
            let spellPeriods = spell.intervals.filter { !$0.isGrace }.map(\.period)
            for (a, b) in zip(spellPeriods, spellPeriods.dropFirst()) where periods[a].product != periods[b].product {
                let m = months.index(of: periods[b].start)
                monthly[MonthlyKey(month: m, platform: platform, product: periods[a].product), default: .init()].changesOut += 1
                monthly[MonthlyKey(month: m, platform: platform, product: periods[b].product), default: .init()].changesIn += 1
            }
            // Active at month boundaries: start < b <= end.
            var k = startMonth + 1
            while k <= lastMonth + 1, boundary(k) <= spell.end {
                let b = boundary(k)
                let productThen = product(in: spell, at: b - 1)
                monthly[MonthlyKey(month: k - 1, platform: platform, product: productThen), default: .init()].activeEnd += 1
                if k <= lastMonth {
                    monthly[MonthlyKey(month: k, platform: platform, product: productThen), default: .init()].activeStart += 1
                }
                addMRR(platform: platform, period: periods[spell.intervals.last { $0.start <= b - 1 && b - 1 < $0.end }?.period ?? spell.intervals[0].period], month: k - 1)
                k += 1
            }
            // Churn: the spell ends at or before as-of.
            if spell.end <= asOf {
                let m = months.index(of: spell.end)
                let lastProduct = product(in: spell, at: spell.end - 1)
                var counts = monthly[MonthlyKey(month: m, platform: platform, product: lastProduct), default: .init()]
                switch endReason(of: spell, periods: periods, episodes: episodes.map { ($0.start, $0.graceEnd) }, revocation: revocation) {
                case .refund: counts.refund += 1
                case .involuntary: counts.involuntary += 1
                case .paused: counts.paused += 1
                case .voluntary: counts.voluntary += 1
                case .other: counts.other += 1
                }
                monthly[MonthlyKey(month: m, platform: platform, product: lastProduct)] = counts
                if spell.start < months.starts[m] {
                    let startProduct = product(in: spell, at: months.starts[m] - 1)
                    monthly[MonthlyKey(month: m, platform: platform, product: startProduct), default: .init()].churnedFromStart += 1
                }
            }
        }
        for spell in trialSpells {
            var k = months.index(of: spell.start) + 1
            while k <= lastMonth + 1, boundary(k) <= spell.end {
                let productThen = product(in: spell, at: boundary(k) - 1)
                monthly[MonthlyKey(month: k - 1, platform: platform, product: productThen), default: .init()].trialsEnd += 1
                k += 1
            }
        }

        // mrr_movements: each month, the MRR just before its start against the MRR just before its end.
        if let firstSpell = paidSpells.first, let lastSpell = paidSpells.last {
            func mrr(before b: Int64) -> MRRMovementTruth.MRR? {
                guard let spell = paidSpells.first(where: { $0.start < b && b <= $0.end }),
                      let interval = spell.intervals.last(where: { $0.start <= b - 1 && b - 1 < $0.end }),
                      let price = periods[interval.period].priceMicros, price > 0 else { return nil }
                return MRRMovementTruth.MRR(currency: periods[interval.period].currency,
                                            mrr12: price * monthlyFactor(periods[interval.period].product))
            }
            for m in months.index(of: firstSpell.start)...min(lastMonth, months.index(of: lastSpell.end)) {
                movements.record(month: m, platform: platform, start: mrr(before: boundary(m)), end: mrr(before: boundary(m + 1)),
                                 paidBefore: firstSpell.start < months.starts[m])
            }
        }

        // revenue_monthly: charges and refunds.
        for p in periods where !p.trial {
            let m = months.index(of: p.start)
            let currency = p.priceMicros == nil ? "" : p.currency
            var sums = revenue[RevenueKey(month: m, platform: platform, product: p.product, currency: currency), default: .init()]
            sums.transactions += 1
            if let price = p.priceMicros { sums.gross += price } else { sums.unpriced += 1 }
            revenue[RevenueKey(month: m, platform: platform, product: p.product, currency: currency)] = sums
            if let r = revocation(p), let price = p.priceMicros {
                let key = RevenueKey(month: months.index(of: r), platform: platform, product: p.product, currency: p.currency)
                revenue[key, default: .init()].refunds += price
                revenue[key, default: .init()].refunded += 1
            }
        }
        for purchase in subscription.oneTimePurchases where purchase.at <= asOf {
            let key = RevenueKey(month: months.index(of: purchase.at), platform: platform, product: purchase.product, currency: purchase.currency)
            revenue[key, default: .init()].gross += purchase.priceMicros
            revenue[key, default: .init()].transactions += 1
        }

        // retention_cohorts
        if let first = periods.first(where: { !$0.trial }) {
            let key = CohortKey(month: months.index(of: first.start), platform: platform,
                                duration: durations[first.product] ?? "")
            let kept = periods.filter { !$0.trial && revocation($0) == nil }.count
            cohorts[key, default: [:]][kept, default: 0] += 1
        }

        // trial_conversion
        if let first = periods.first(where: { $0.trial }) {
            let key = TrialKey(month: months.index(of: first.start), platform: platform, product: first.product)
            let trialEnd = effectiveEnd(first)
            let paidAtEnd = periods.contains { !$0.trial && abs($0.start - trialEnd) <= 1000 }
            let fromEnd = episodes.filter { $0.start == trialEnd }
            let recovered = fromEnd.contains { $0.recovered != nil }
            let open = fromEnd.contains { $0.recovered == nil && $0.lost == nil }
            var counts = trials[key, default: .init()]
            counts.trials += 1
            if paidAtEnd || recovered { counts.converted += 1 }
            else if trialEnd <= asOf && !open { counts.abandoned += 1 }
            else { counts.pending += 1 }
            trials[key] = counts
        }

        // grace_recovery
        for e in episodes {
            let key = GraceKey(month: months.index(of: e.start), platform: platform)
            var counts = grace[key, default: .init()]
            counts.episodes += 1
            if e.graceEnd > e.start { counts.withGrace += 1 }
            if let t = e.recovered {
                if t < e.graceEnd { counts.inGrace += 1 } else { counts.inRetry += 1 }
                counts.recoveryMillis.append(t - e.start)
            } else if e.lost != nil {
                counts.lost += 1
            } else {
                counts.open += 1
            }
            grace[key] = counts
        }
    }

    private mutating func addMRR(platform: String, period: TimelinePeriod, month: Int) {
        guard let price = period.priceMicros else { return }
        revenue[RevenueKey(month: month, platform: platform, product: period.product, currency: period.currency), default: .init()].mrr12
            += price * monthlyFactor(period.product)
    }

    /// Twelve times the months in one period of `product` is paid for, inverted: MRR × 12 = price × this.
    private func monthlyFactor(_ product: String) -> Int64 {
        switch durations[product] {
        case "P1W": 48
        case "P1M": 12
        case "P2M": 6
        case "P3M": 4
        case "P6M": 2
        case "P1Y": 1
        default: 12
        }
    }

    private enum SpellEnd { case refund, involuntary, paused, voluntary, other }

    /// DESIGN.md: first match wins: a revocation, then an episode's G (E when G = E), then the last period's reason.
    private func endReason(of spell: Spell, periods: [TimelinePeriod], episodes: [(Int64, Int64)],
                           revocation: (TimelinePeriod) -> Int64?) -> SpellEnd {
        if periods.contains(where: { revocation($0) == spell.end }) { return .refund }
        if episodes.contains(where: { $0.1 == spell.end }) { return .involuntary }
        guard let last = spell.intervals.last(where: { !$0.isGrace }) else { return .other }
        switch periods[last.period].endReason {
        case .paused: return .paused
        case .voluntary: return .voluntary
        case .billingIssue: return .involuntary
        default: return .other
        }
    }

    /// Joins intervals that touch or overlap into spells.
    private static func spells(_ intervals: [Interval]) -> [Spell] {
        var result: [Spell] = []
        for interval in intervals.sorted(by: { ($0.start, $0.end) < ($1.start, $1.end) }) {
            if let last = result.last, interval.start <= last.end {
                result[result.count - 1].end = max(last.end, interval.end)
                result[result.count - 1].intervals.append(interval)
            } else {
                result.append(Spell(start: interval.start, end: interval.end, intervals: [interval]))
            }
        }
        return result
    }

    // MARK: - Tables

    /// A table row: CSV column names and exact cell strings, in column order.
    typealias Row = [(String, String)]

    static func rate(_ numerator: Int, _ denominator: Int) -> String {
        denominator == 0 ? "" : String(format: "%.6f", Double(numerator) / Double(denominator))
    }

    private static func precedes(_ a: [String], _ b: [String]) -> Bool {
        for (x, y) in zip(a, b) where x != y { return x.utf8.lexicographicallyPrecedes(y.utf8) }
        return a.count < b.count
    }

    /// Every table of cli.md, rows in the CSV's sort order.
    func tables() -> [(String, [Row])] {
        [("subscriptions_monthly", subscriptionsMonthly()), ("revenue_monthly", revenueMonthly()),
         ("mrr_movements", mrrMovements()), ("retention_cohorts", retentionCohorts()), ("trial_conversion", trialConversion()),
         ("grace_recovery", graceRecovery())]
    }

    private func subscriptionsMonthly() -> [Row] {
        var rows: [([String], Row)] = []
        var groups: [String: [Int: MonthlyCounts]] = [:]
        for (key, counts) in monthly {
            groups["\(key.platform)|\(key.product)", default: [:]][key.month, default: .init()].add(counts, keepChanges: true)
            groups["\(key.platform)|all", default: [:]][key.month, default: .init()].add(counts, keepChanges: false)
            groups["all|all", default: [:]][key.month, default: .init()].add(counts, keepChanges: false)
        }
        for (group, first) in firstMonth where first <= lastMonth {
            let parts = group.split(separator: "|").map(String.init)
            for m in first...lastMonth {
                let c = groups[group]?[m] ?? MonthlyCounts()
                let row: Row = [
                    ("month", months.labels[m]), ("platform", parts[0]), ("product_id", parts[1]),
                    ("active_start", "\(c.activeStart)"), ("new", "\(c.new)"), ("reactivated", "\(c.reactivated)"),
                    ("product_changes_in", "\(c.changesIn)"), ("product_changes_out", "\(c.changesOut)"),
                    ("churned", "\(c.churned)"), ("churned_voluntary", "\(c.voluntary)"),
                    ("churned_involuntary", "\(c.involuntary)"), ("churned_refund", "\(c.refund)"),
                    ("churned_paused", "\(c.paused)"), ("churned_other", "\(c.other)"), ("active_end", "\(c.activeEnd)"),
                    ("churn_rate", TruthCalculator.rate(c.churnedFromStart, c.activeStart)),
                    ("net_churn_rate", c.activeStart == 0 ? "" : String(format: "%.6f", Double(c.churned - c.reactivated) / Double(c.activeStart))),
                    ("active_trials_end", "\(c.trialsEnd)"),
                ]
                rows.append(([months.labels[m], parts[0], parts[1]], row))
            }
        }
        return rows.sorted { TruthCalculator.precedes($0.0, $1.0) }.map(\.1)
    }

    private func revenueMonthly() -> [Row] {
        revenue.filter { key, s in
            key.month <= lastMonth
                && (s.gross != 0 || s.refunds != 0 || s.transactions != 0 || s.refunded != 0 || s.unpriced != 0 || s.mrr12 != 0)
        }
        .map { key, s -> ([String], Row) in
            let sortKey = [months.labels[key.month], key.platform, key.product, key.currency]
            return (sortKey, [
                ("month", sortKey[0]), ("platform", key.platform), ("product_id", key.product), ("currency", key.currency),
                ("gross", Money.twoDecimals(s.gross)), ("refunds", Money.twoDecimals(s.refunds)),
                // As written: the written gross less the written refunds (DESIGN.md "Numbers").
                ("net", Money.text(cents: Money.cents(s.gross, divisor: 1_000_000) - Money.cents(s.refunds, divisor: 1_000_000))),
                ("transactions", "\(s.transactions)"),
                ("refunded_transactions", "\(s.refunded)"), ("unpriced_transactions", "\(s.unpriced)"),
                ("mrr_end", Money.twoDecimals(s.mrr12, divisor: 12_000_000)),
            ])
        }
        .sorted { TruthCalculator.precedes($0.0, $1.0) }.map(\.1)
    }

    private func mrrMovements() -> [Row] {
        var productMRR: [MRRMovementTruth.Key: [Int64]] = [:]
        for (key, sums) in revenue where key.month <= lastMonth && sums.mrr12 != 0 {
            productMRR[MRRMovementTruth.Key(month: key.month, platform: key.platform, currency: key.currency), default: []].append(sums.mrr12)
        }
        return movements.rows(lastMonth: lastMonth, labels: months.labels, productMRR: productMRR)
    }

    /// The time the k-th renewal of a cohort was due: the start of the month after the cohort month plus
    /// k durations, in the reporting time zone.
    private func due(cohortMonth: Int, duration: String, k: Int) -> Int64 {
        let base = months.starts[cohortMonth + 1]
        if duration.hasPrefix("P"), duration.hasSuffix("W"), let n = Int(duration.dropFirst().dropLast()) {
            return UTCCalendar.adding(days: 7 * n * k, to: base, in: timeZone)
        }
        if duration.hasPrefix("P"), duration.hasSuffix("M"), let n = Int(duration.dropFirst().dropLast()) {
            return UTCCalendar.adding(months: n * k, to: base, in: timeZone)
        }
        if duration.hasPrefix("P"), duration.hasSuffix("Y"), let n = Int(duration.dropFirst().dropLast()) {
            return UTCCalendar.adding(months: 12 * n * k, to: base, in: timeZone)
        }
        if duration.hasPrefix("P"), duration.hasSuffix("D"), let n = Int(duration.dropFirst().dropLast()) {
            return UTCCalendar.adding(days: n * k, to: base, in: timeZone)
        }
        return Int64.max
    }

    private func retentionCohorts() -> [Row] {
        var rows: [([String], Int, Row)] = []
        for (key, histogram) in cohorts {
            let size = histogram.values.reduce(0, +)
            var k = 0
            while true {
                let dueAt = due(cohortMonth: key.month, duration: key.duration, k: k)
                guard dueAt <= scenario.asOf else { break }
                let retained = histogram.filter { $0.key >= k + 1 }.values.reduce(0, +)
                let complete = dueAt + 60 * 86_400_000 <= scenario.asOf
                let label = months.labels[key.month]
                rows.append(([label, key.platform, key.duration], k, [
                    ("cohort_month", label), ("platform", key.platform), ("duration", key.duration),
                    ("cohort_size", "\(size)"), ("period", "\(k)"), ("retained", "\(retained)"),
                    ("retention_rate", TruthCalculator.rate(retained, size)), ("complete", complete ? "true" : "false"),
                ]))
                k += 1
            }
        }
        return rows.sorted { a, b in a.0 == b.0 ? a.1 < b.1 : TruthCalculator.precedes(a.0, b.0) }.map(\.2)
    }

    private func trialConversion() -> [Row] {
        trials.filter { $0.value.trials > 0 }.map { key, c -> ([String], Row) in
            let label = months.labels[key.month]
            return ([label, key.platform, key.product], [
                ("cohort_month", label), ("platform", key.platform), ("product_id", key.product),
                ("trials", "\(c.trials)"), ("converted", "\(c.converted)"), ("abandoned", "\(c.abandoned)"),
                ("pending", "\(c.pending)"), ("conversion_rate", TruthCalculator.rate(c.converted, c.converted + c.abandoned)),
            ])
        }
        .sorted { TruthCalculator.precedes($0.0, $1.0) }.map(\.1)
    }

    private func graceRecovery() -> [Row] {
        grace.filter { $0.value.episodes > 0 }.map { key, c -> ([String], Row) in
            let label = months.labels[key.month]
            let recovered = c.inGrace + c.inRetry
            var median = ""
            let sorted = c.recoveryMillis.sorted()
            if !sorted.isEmpty {
                let middle = sorted.count / 2
                let hours = sorted.count % 2 == 1
                    ? Double(sorted[middle]) / 3_600_000
                    : (Double(sorted[middle - 1]) / 3_600_000 + Double(sorted[middle]) / 3_600_000) / 2
                median = String(format: "%.2f", hours)
            }
            return ([label, key.platform], [
                ("month", label), ("platform", key.platform), ("episodes", "\(c.episodes)"),
                ("with_grace", "\(c.withGrace)"), ("recovered_in_grace", "\(c.inGrace)"),
                ("recovered_in_retry", "\(c.inRetry)"), ("lost", "\(c.lost)"), ("open", "\(c.open)"),
                ("recovery_rate", TruthCalculator.rate(recovered, recovered + c.lost)),
                ("grace_recovery_rate", TruthCalculator.rate(c.inGrace, recovered + c.lost)),
                ("median_hours_to_recover", median),
            ])
        }
        .sorted { TruthCalculator.precedes($0.0, $1.0) }.map(\.1)
    }
}

import Facts

/// Builds `subscriptions_monthly` from paid spells and trial segments, keeping only per-month counters.
///
/// Every count is an event in a month (a spell starts, a product changes, a spell ends, a trial starts or
/// ends); `active_start` and `active_end` are running sums of those events, so the identity
/// `active_end = active_start + new + reactivated + in − out − churned` holds in every row by construction.
/// A segment `[a, b)` counts as active at the end of month M (ending at x) exactly when `a < x ≤ b`, which is
/// what the running sum of "started before x" minus "ended before x" gives.
struct SubscriptionAggregator: Sendable {
    private struct Key: Hashable {
        var month: Int
        /// Index into `products`.
        var product: Int
    }

    private struct ProductKey: Hashable {
        var platform: Platform
        var productId: String
    }

    private struct Counts: Sendable {
        var new = 0, reactivated = 0, changesIn = 0, changesOut = 0
        var voluntary = 0, involuntary = 0, refund = 0, paused = 0, other = 0
        /// Spells active at the start of the month that ended in it (churn_rate's numerator).
        var churnedFromStart = 0
        var trialStarts = 0, trialEnds = 0

        var churned: Int { voluntary + involuntary + refund + paused + other }

        /// Every count in the order they are written to a partial state.
        var all: [Int] {
            [new, reactivated, changesIn, changesOut, voluntary, involuntary, refund, paused, other, churnedFromStart,
             trialStarts, trialEnds]
        }

        /// Counts read back in the order of ``all``.
        init(reading reader: inout PartialReader) throws(PartialStateError) {
            (new, reactivated, changesIn, changesOut) = (try reader.tally(), try reader.tally(), try reader.tally(), try reader.tally())
            (voluntary, involuntary, refund, paused, other) = (try reader.tally(), try reader.tally(), try reader.tally(),
                                                               try reader.tally(), try reader.tally())
            (churnedFromStart, trialStarts, trialEnds) = (try reader.tally(), try reader.tally(), try reader.tally())
        }

        init() {}

        mutating func add(_ other: Counts) {
            new += other.new
            reactivated += other.reactivated
            changesIn += other.changesIn
            changesOut += other.changesOut
            voluntary += other.voluntary
            involuntary += other.involuntary
            refund += other.refund
            paused += other.paused
            self.other += other.other
            churnedFromStart += other.churnedFromStart
            trialStarts += other.trialStarts
            trialEnds += other.trialEnds
        }
    }

    private var counts: [Key: Counts] = [:]
    /// Each (platform, product) once, numbered in order of appearance, so that per-event keys hash integers.
    private var productIndex: [ProductKey: Int] = [:]
    private var products: [ProductKey] = []
    /// Month of each product's first period start (trial or paid), by product index: its rows start there.
    private var firstMonths: [Int] = []

    private mutating func index(of key: ProductKey) -> Int {
        if let index = productIndex[key] { return index }
        productIndex[key] = products.count
        products.append(key)
        firstMonths.append(Int.max)
        return products.count - 1
    }

    mutating func add(_ timeline: Timeline, months: inout MonthTable) {
        let history = timeline.history
        var periodProducts: [Int] = []
        periodProducts.reserveCapacity(history.periods.count)
        for period in history.periods {
            let product = index(of: ProductKey(platform: history.platform, productId: period.productId))
            periodProducts.append(product)
            if period.start <= timeline.asOf, let month = months.month(of: period.start) {
                firstMonths[product] = min(firstMonths[product], month)
            }
        }
        func product(_ segment: Segment) -> Int { periodProducts[segment.period] }
        func update(_ instant: Millis, _ product: Int, _ change: (inout Counts) -> Void) {
            guard let month = months.month(of: instant) else { return }
            change(&counts[Key(month: month, product: product), default: Counts()])
        }

        for (index, spell) in timeline.spells.enumerated() {
            guard let first = spell.segments.first else { continue }
            update(spell.start, product(first)) { index == 0 ? ($0.new += 1) : ($0.reactivated += 1) }
            for (previous, segment) in zip(spell.segments, spell.segments.dropFirst()) where product(previous) != product(segment) {
                update(segment.start, product(previous)) { $0.changesOut += 1 }
                update(segment.start, product(segment)) { $0.changesIn += 1 }
            }
            guard let month = months.month(of: spell.end), let last = spell.segments.last else { continue }
            update(spell.end, product(last)) { counts in
                switch spell.reason {
                case .voluntary: counts.voluntary += 1
                case .involuntary: counts.involuntary += 1
                case .refund: counts.refund += 1
                case .paused: counts.paused += 1
                case .other: counts.other += 1
                }
            }
            let monthStart = months.start(of: month)
            if spell.start < monthStart, let atStart = spell.segment(justBefore: monthStart) {
                update(spell.end, product(atStart)) { $0.churnedFromStart += 1 }
            }
        }
        for segment in timeline.trialSegments {
            update(segment.start, product(segment)) { $0.trialStarts += 1 }
            update(segment.end, product(segment)) { $0.trialEnds += 1 }
        }
    }

    /// The rows from each product's first month through the as-of month, with platform and overall totals.
    func rows(months: MonthTable) -> [SubscriptionsMonthlyRow] {
        var rows: [SubscriptionsMonthlyRow] = []
        var platformTotals: [Platform: [Int: Counts]] = [:]
        var overallTotals: [Int: Counts] = [:]
        for (index, key) in products.enumerated() where firstMonths[index] <= months.lastMonth {
            let first = firstMonths[index]
            let series = (first...months.lastMonth).map { month in counts[Key(month: month, product: index)] ?? Counts() }
            rows += Self.rows(platform: key.platform.rawValue, productId: key.productId, firstMonth: first,
                              series: series, withChanges: true)
            for (offset, monthCounts) in series.enumerated() {
                platformTotals[key.platform, default: [:]][first + offset, default: Counts()].add(monthCounts)
                overallTotals[first + offset, default: Counts()].add(monthCounts)
            }
        }
        for (platform, totals) in platformTotals {
            rows += Self.totalRows(platform: platform.rawValue, totals: totals, lastMonth: months.lastMonth)
        }
        rows += Self.totalRows(platform: "all", totals: overallTotals, lastMonth: months.lastMonth)
        return rows.sorted { ByteOrder.precedes([$0.month, $0.platform, $0.productId], [$1.month, $1.platform, $1.productId]) }
    }

    private static func totalRows(platform: String, totals: [Int: Counts], lastMonth: Int) -> [SubscriptionsMonthlyRow] {
        guard let first = totals.keys.min() else { return [] }
        let series = (first...max(first, lastMonth)).map { totals[$0] ?? Counts() }
        return rows(platform: platform, productId: "all", firstMonth: first, series: series, withChanges: false)
    }

    private static func rows(platform: String, productId: String, firstMonth: Int, series: [Counts],
                             withChanges: Bool) -> [SubscriptionsMonthlyRow] {
        var active = 0
        var trials = 0
        return series.enumerated().map { offset, counts in
            let changesIn = withChanges ? counts.changesIn : 0
            let changesOut = withChanges ? counts.changesOut : 0
            let activeStart = active
            active += counts.new + counts.reactivated + changesIn - changesOut - counts.churned
            trials += counts.trialStarts - counts.trialEnds
            return SubscriptionsMonthlyRow(
                month: MonthTable.label(firstMonth + offset), platform: platform, productId: productId,
                activeStart: activeStart, new: counts.new, reactivated: counts.reactivated,
                productChangesIn: changesIn, productChangesOut: changesOut,
                churnedVoluntary: counts.voluntary, churnedInvoluntary: counts.involuntary, churnedRefund: counts.refund,
                churnedPaused: counts.paused, churnedOther: counts.other, activeEnd: active,
                churnRate: Ratio(counts.churnedFromStart, activeStart),
                netChurnRate: Ratio(counts.churned - counts.reactivated, activeStart),
                activeTrialsEnd: trials)
        }
    }
}

extension SubscriptionAggregator {
    /// Adds `other`'s counts (of other subscriptions) to these: products are matched by platform and id, whatever
    /// their numbers in either, and each keeps its earliest first month.
    mutating func merge(_ other: SubscriptionAggregator) {
        let mapped = other.products.map { index(of: $0) }
        for (theirs, first) in other.firstMonths.enumerated() {
            firstMonths[mapped[theirs]] = min(firstMonths[mapped[theirs]], first)
        }
        for (key, theirs) in other.counts {
            counts[Key(month: key.month, product: mapped[key.product]), default: Counts()].add(theirs)
        }
    }

    /// Products in byte order of platform and id, each with its first month and its months in order: no product
    /// number is written, so the bytes do not depend on the order subscriptions arrived in.
    func encode(to writer: inout PartialWriter) {
        var cells = [[(month: Int, counts: Counts)]](repeating: [], count: products.count)
        for (key, value) in counts { cells[key.product].append((key.month, value)) }
        let order = products.indices.sorted {
            ByteOrder.precedes([products[$0].platform.rawValue, products[$0].productId],
                               [products[$1].platform.rawValue, products[$1].productId])
        }
        writer.count(order.count)
        for product in order {
            writer.platform(products[product].platform)
            writer.string(products[product].productId)
            writer.optionalMonth(firstMonths[product] == Int.max ? nil : firstMonths[product])
            writer.count(cells[product].count)
            for cell in cells[product].sorted(by: { $0.month < $1.month }) {
                writer.int(cell.month)
                for count in cell.counts.all { writer.count(count) }
            }
        }
    }

    /// The counts `encode` wrote, for a report over `months`.
    init(from reader: inout PartialReader, months: MonthTable) throws(PartialStateError) {
        self.init()
        for _ in 0..<(try reader.count()) {
            let product = index(of: ProductKey(platform: try reader.platform(), productId: try reader.string()))
            guard product == products.count - 1 else { throw .damaged("a product is written twice") }
            firstMonths[product] = try reader.optionalMonth(in: months) ?? Int.max
            for _ in 0..<(try reader.count()) {
                let key = Key(month: try reader.month(in: months), product: product)
                guard counts.updateValue(try Counts(reading: &reader), forKey: key) == nil else {
                    throw .damaged("a month is written twice")
                }
            }
        }
    }
}

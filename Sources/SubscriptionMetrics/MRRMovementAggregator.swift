import Facts

/// Builds `mrr_movements` (`metrics.md`): per month × platform × currency, why MRR changed between the start and
/// the end of the month, subscription by subscription.
///
/// Each subscription's MRR is a step function of time (``PricedTimeline/mrr``, the same one `revenue_monthly`'s
/// `mrr_end` sums). For every month from its first priced paid segment to its last, its MRR at the start of the
/// month (`s`) and at the end (`e`, for the as-of month: at the as-of time) are compared and the difference is
/// added to that month's ``MRRMovementSums``; nothing else is kept, so memory grows with months × platforms ×
/// currencies, and the sums of two sets of subscriptions merge by adding.
struct MRRMovementAggregator: Sendable {
    private struct Key: Hashable {
        var month: Int
        var platform: Platform
        var currency: String
    }

    private var sums: [Key: MRRMovementSums] = [:]

    mutating func add(_ priced: PricedTimeline, months: inout MonthTable) {
        let segments = priced.mrr
        guard let first = segments.first, let firstMonth = months.month(of: first.start),
              let firstPaid = priced.timeline.spells.first?.start else { return }
        // A segment ending after the as-of time runs through the as-of month.
        let lastMonth = months.month(of: segments[segments.count - 1].end) ?? months.lastMonth
        let platform = priced.timeline.history.platform
        let asOfBoundary = months.asOf == Millis.max ? months.asOf : months.asOf + 1
        var next = 0
        /// The segment current at the end of a month that ends at `boundary` (`start < boundary <= end`), if any.
        /// Boundaries only grow, so the search resumes where the last one stopped.
        func current(_ boundary: Millis) -> PricedTimeline.MRRSegment? {
            while next < segments.count, segments[next].end < boundary { next += 1 }
            return next < segments.count && segments[next].start < boundary ? segments[next] : nil
        }
        func record(_ month: Int, _ currency: String, _ kind: MRRMovementKind, _ twelfths: Int64) {
            sums[Key(month: month, platform: platform, currency: currency), default: MRRMovementSums()]
                .add(MRRMovementSums(kind, twelfths: twelfths))
        }
        var atStart = current(months.start(of: firstMonth))
        for month in firstMonth...lastMonth {
            let atEnd = current(month == months.lastMonth ? asOfBoundary : months.start(of: month + 1))
            switch (atStart, atEnd) {
            case (nil, nil):
                break
            case let (start?, end?) where start.currency == end.currency:
                if end.twelfths > start.twelfths {
                    record(month, end.currency, .expansion, end.twelfths - start.twelfths)
                } else if end.twelfths < start.twelfths {
                    record(month, end.currency, .contraction, start.twelfths - end.twelfths)
                }
            default:
                // Amounts compare only within a currency: a move from A to B churns in A and comes back in B.
                if let start = atStart { record(month, start.currency, .churned, start.twelfths) }
                if let end = atEnd {
                    record(month, end.currency, firstPaid >= months.start(of: month) ? .new : .reactivation, end.twelfths)
                }
            }
            atStart = atEnd
        }
    }

    /// A row for every month × platform × currency with any amount that is not zero, written from the exact sums.
    ///
    /// `mrr_end` is the sum of the month's `revenue_monthly` `mrr_end` cells (`revenue`, each rounded from its
    /// product's exact MRR) and `mrr_start` the previous month's `mrr_end`, so both are the CSV's own figures; the
    /// movements are each rounded to cents and then made to add up from one to the other (see
    /// ``centsAddingUp(_:exact:to:)``). With a reporting currency, the same on the converted amounts.
    func rows(months: MonthTable, revenue: [RevenueMonthlyRow], reportingCurrency: String?, fxRates: FXRates?) -> [MRRMovementRow] {
        struct Series: Hashable {
            var platform: Platform
            var currency: String
        }
        struct MonthSeries: Hashable {
            var month: String
            var series: Series
        }
        /// The exact MRR at each month end, by product: what revenue_monthly's mrr_end cells are rounded from.
        var productMRR: [MonthSeries: [Money]] = [:]
        var allSeries = Set(sums.keys.map { Series(platform: $0.platform, currency: $0.currency) })
        for row in revenue where row.mrrEnd.units != 0 {
            let series = Series(platform: row.platform, currency: row.currency)
            productMRR[MonthSeries(month: row.month, series: series), default: []].append(row.mrrEnd)
            allSeries.insert(series)
        }
        var rows: [MRRMovementRow] = []
        for series in allSeries {
            var startMRR: [Money] = []
            for month in months.firstMonth...months.lastMonth {
                let label = MonthTable.label(month)
                let endMRR = productMRR[MonthSeries(month: label, series: series)] ?? []
                let movement = sums[Key(month: month, platform: series.platform, currency: series.currency)] ?? MRRMovementSums()
                defer { startMRR = endMRR }
                guard !startMRR.isEmpty || !endMRR.isEmpty || movement != MRRMovementSums() else { continue }
                let amounts = Self.centsAddingUp(movement.twelfths.map { Money(units: $0, unitsPerMicro: 12).cents },
                                                 exact: movement.twelfths,
                                                 to: FullWidth.subtract(Self.cents(endMRR), Self.cents(startMRR)))
                var row = MRRMovementRow(
                    month: label, platform: series.platform, currency: series.currency,
                    mrrStart: Self.money(cents: Self.cents(startMRR)), new: Self.money(cents: amounts[0]),
                    expansion: Self.money(cents: amounts[1]), contraction: Self.money(cents: amounts[2]),
                    churned: Self.money(cents: amounts[3]), reactivation: Self.money(cents: amounts[4]),
                    mrrEnd: Self.money(cents: Self.cents(endMRR)),
                    newCount: movement.newCount, expansionCount: movement.expansionCount,
                    contractionCount: movement.contractionCount, churnedCount: movement.churnedCount,
                    reactivationCount: movement.reactivationCount)
                if let reportingCurrency {
                    let rate: ExchangeRate? = series.currency == reportingCurrency
                        ? .one : fxRates?.rate(month: label, currency: series.currency)
                    row.converted = rate.map { rate in
                        let start = Self.cents(startMRR.map { $0.converted(by: rate) })
                        let end = Self.cents(endMRR.map { $0.converted(by: rate) })
                        let amounts = Self.centsAddingUp(
                            movement.twelfths.map { Money(units: $0, unitsPerMicro: 12).converted(by: rate).cents },
                            exact: movement.twelfths, to: FullWidth.subtract(end, start))
                        return ConvertedMRRMovement(
                            mrrStart: Self.money(cents: start), new: Self.money(cents: amounts[0]),
                            expansion: Self.money(cents: amounts[1]), contraction: Self.money(cents: amounts[2]),
                            churned: Self.money(cents: amounts[3]), reactivation: Self.money(cents: amounts[4]),
                            mrrEnd: Self.money(cents: end))
                    } ?? ConvertedMRRMovement()
                }
                rows.append(row)
            }
        }
        return rows.sorted {
            ByteOrder.precedes([$0.month, $0.platform.rawValue, $0.currency], [$1.month, $1.platform.rawValue, $1.currency])
        }
    }

    /// The five movement amounts in cents (new, expansion, contraction, churned, reactivation; `cents` are the exact
    /// amounts `exact` rounded half away from zero), changed as little as needed so that
    /// `new + expansion + reactivation − contraction − churned == target` exactly (DESIGN.md "Numbers").
    ///
    /// `target` (the written end minus the written start) differs from the sum of the rounded movements by at most
    /// a cent or so per product and movement. The difference goes to the movement with the largest exact amount
    /// (ties in column order), as much as it can take without going below zero, then to the next; a movement
    /// with no subscription behind it takes none, unless none can: then an increase is expansion and a decrease
    /// contraction (e.g. a product change at the same price, which moves cents between two rounded products).
    static func centsAddingUp(_ cents: [Int64], exact: [Int64], to target: Int64) -> [Int64] {
        var cents = cents
        var missing = target
        for kind in MRRMovementKind.allCases {
            missing = FullWidth.subtract(missing, kind.sign * cents[kind.rawValue])
        }
        let preferred = MRRMovementKind.allCases.filter { exact[$0.rawValue] > 0 }.sorted { lhs, rhs in
            exact[lhs.rawValue] != exact[rhs.rawValue] ? exact[lhs.rawValue] > exact[rhs.rawValue] : lhs.rawValue < rhs.rawValue
        }
        for kind in preferred where missing != 0 {
            let index = kind.rawValue
            if (missing > 0) == (kind.sign > 0) {
                cents[index] = FullWidth.add(cents[index], abs(missing))
                missing = 0
            } else {
                let taken = min(abs(missing), cents[index])
                cents[index] -= taken
                missing = missing > 0 ? missing - taken : missing + taken
            }
        }
        if missing > 0 {
            cents[MRRMovementKind.expansion.rawValue] = FullWidth.add(cents[MRRMovementKind.expansion.rawValue], missing)
        } else if missing < 0 {
            cents[MRRMovementKind.contraction.rawValue] = FullWidth.subtract(cents[MRRMovementKind.contraction.rawValue], missing)
        }
        return cents
    }

    private static func cents(_ amounts: [Money]) -> Int64 {
        amounts.reduce(0) { FullWidth.add($0, $1.cents) }
    }

    private static func money(cents: Int64) -> Money {
        Money(micros: FullWidth.multiplyDivideRounded(cents, 10_000, 1))
    }
}

extension MRRMovementAggregator {
    /// Adds `other`'s movements (of other subscriptions) to these.
    mutating func merge(_ other: MRRMovementAggregator) {
        for (key, theirs) in other.sums { sums[key, default: MRRMovementSums()].add(theirs) }
    }

    /// The sums in byte order of platform and currency, then month.
    func encode(to writer: inout PartialWriter) {
        let keys = sums.keys.sorted {
            $0.platform != $1.platform || $0.currency != $1.currency
                ? ByteOrder.precedes([$0.platform.rawValue, $0.currency], [$1.platform.rawValue, $1.currency])
                : $0.month < $1.month
        }
        writer.count(keys.count)
        for key in keys {
            let value = sums[key] ?? MRRMovementSums()
            writer.platform(key.platform)
            writer.string(key.currency)
            writer.int(key.month)
            for twelfths in value.twelfths { writer.signed(twelfths) }
            for count in value.counts { writer.count(count) }
        }
    }

    /// The sums `encode` wrote, for a report over `months`.
    init(from reader: inout PartialReader, months: MonthTable) throws(PartialStateError) {
        self.init()
        for _ in 0..<(try reader.count()) {
            let platform = try reader.platform()
            let currency = try reader.string()
            let key = Key(month: try reader.month(in: months), platform: platform, currency: currency)
            var value = MRRMovementSums()
            (value.newTwelfths, value.expansionTwelfths, value.contractionTwelfths, value.churnedTwelfths,
             value.reactivationTwelfths) = (try reader.signed(), try reader.signed(), try reader.signed(), try reader.signed(),
                                            try reader.signed())
            (value.newCount, value.expansionCount, value.contractionCount, value.churnedCount, value.reactivationCount)
                = (try reader.tally(), try reader.tally(), try reader.tally(), try reader.tally(), try reader.tally())
            guard sums.updateValue(value, forKey: key) == nil else { throw .damaged("a movement month is written twice") }
        }
    }
}

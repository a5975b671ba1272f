import Facts

/// Builds `revenue_monthly`: charges by charge month, refunds by revocation month, and MRR at each month end,
/// per platform × product × purchase currency. Amounts are exact integer micros.
///
/// MRR is kept as +/− events (a priced paid segment adds its monthly amount in the month it starts and removes
/// it in the month it ends), summed month by month at the end, so no history is held and no per-month work is
/// done per subscription.
struct RevenueAggregator: Sendable {
    private struct Key: Hashable {
        var month: Int
        /// Index into `series`.
        var series: Int
    }

    private struct SeriesKey: Hashable {
        var platform: Platform
        var productId: String
        var currency: String
    }

    private struct Counts: Sendable {
        var grossMicros: Int64 = 0
        var refundMicros: Int64 = 0
        var transactions = 0
        var refundedTransactions = 0
        var unpricedTransactions = 0
        /// Periods of an offer priced from the list (``RevenueMonthlyRow/listPricedOffers``).
        var listPricedOffers = 0
        /// Periods counted as paid with no payment shown (``RevenueMonthlyRow/assumedPaidPeriods``).
        var assumedPaidPeriods = 0
        /// Proration periods, unpriced (``RevenueMonthlyRow/prorationPeriods``).
        var prorationPeriods = 0
        /// Change of MRR (twelfths of a micro, see ``BillingDuration``) at this month's end.
        var mrrTwelfthsChange: Int64 = 0

        /// No charge, refund or MRR change (an MRR segment may start and end in one month): nothing to write.
        var isZero: Bool {
            grossMicros == 0 && refundMicros == 0 && transactions == 0 && refundedTransactions == 0
                && unpricedTransactions == 0 && listPricedOffers == 0 && assumedPaidPeriods == 0
                && prorationPeriods == 0 && mrrTwelfthsChange == 0
        }

        mutating func add(_ other: Counts) {
            grossMicros = FullWidth.add(grossMicros, other.grossMicros)
            refundMicros = FullWidth.add(refundMicros, other.refundMicros)
            transactions += other.transactions
            refundedTransactions += other.refundedTransactions
            unpricedTransactions += other.unpricedTransactions
            listPricedOffers += other.listPricedOffers
            assumedPaidPeriods += other.assumedPaidPeriods
            prorationPeriods += other.prorationPeriods
            mrrTwelfthsChange = FullWidth.add(mrrTwelfthsChange, other.mrrTwelfthsChange)
        }
    }

    private var counts: [Key: Counts] = [:]
    /// Each (platform, product, currency) once, numbered in order of appearance, so that the per-event keys
    /// hash two integers rather than strings.
    private var seriesIndex: [SeriesKey: Int] = [:]
    private var series: [SeriesKey] = []
    /// First month with an event, per series index.
    private var firstMonths: [Int] = []

    private mutating func index(of key: SeriesKey) -> Int {
        if let index = seriesIndex[key] { return index }
        seriesIndex[key] = series.count
        series.append(key)
        firstMonths.append(Int.max)
        return series.count - 1
    }

    mutating func add(_ priced: PricedTimeline, prices: PriceList, months: inout MonthTable) {
        let timeline = priced.timeline
        let history = timeline.history
        func update(_ instant: Millis, _ series: Int, _ change: (inout Counts) -> Void) {
            guard let month = months.month(of: instant) else { return }
            firstMonths[series] = min(firstMonths[series], month)
            change(&counts[Key(month: month, series: series), default: Counts()])
        }
        func series(_ productId: String, _ currency: String?) -> Int {
            index(of: SeriesKey(platform: history.platform, productId: productId, currency: currency ?? ""))
        }

        /// Series of each paid period (by period index), for its MRR segments.
        var periodSeries = [Int](repeating: 0, count: history.periods.count)
        for (index, period) in history.periods.enumerated() where !period.isTrial && period.start <= timeline.asOf {
            let price = priced.prices[index]
            // A proration period's price is its MRR's rate; what it charged is unknown, so it is unpriced here.
            let charge = period.isProration ? nil : price.micros
            periodSeries[index] = series(period.productId, price.currency)
            update(period.chargedAt, periodSeries[index]) { counts in
                counts.transactions += 1
                if let charge { counts.grossMicros = FullWidth.add(counts.grossMicros, charge) } else { counts.unpricedTransactions += 1 }
                if period.isIntroductory, period.priceMicros == nil, price.micros != nil { counts.listPricedOffers += 1 }
                if period.isAssumedPaid { counts.assumedPaidPeriods += 1 }
                if period.isProration { counts.prorationPeriods += 1 }
            }
            if let revokedAt = timeline.revocation(of: period) {
                let refund = charge.map { FullWidth.multiplyDivideRounded($0, period.refundedPerHundredThousand, 100_000) }
                update(revokedAt, periodSeries[index]) { counts in
                    counts.refundedTransactions += 1
                    counts.refundMicros = FullWidth.add(counts.refundMicros, refund ?? 0)
                }
            }
        }
        for purchase in history.purchases where purchase.purchasedAt <= timeline.asOf {
            let currency = purchase.currency ?? history.currencies.first
            // A stated price is the whole purchase's; a listed one is a unit's.
            let micros = currency.flatMap { currency in
                purchase.priceMicros ?? prices.priceMicros(platform: history.platform, productId: purchase.productId, currency: currency)
                    .map { FullWidth.multiplyDivideRounded($0, purchase.quantity, 1) }
            }
            let purchaseSeries = series(purchase.productId, currency)
            update(purchase.purchasedAt, purchaseSeries) { counts in
                counts.transactions += 1
                if let micros { counts.grossMicros = FullWidth.add(counts.grossMicros, micros) } else { counts.unpricedTransactions += 1 }
            }
            // Each refund in the month it was made, as its share of the price; the purchase is a refunded
            // transaction of each month it was refunded in, once however many refunds the month holds.
            var refundedMonths: Set<Int> = []
            for refund in purchase.refunds where refund.stands(asOf: timeline.asOf) {
                let amount = micros.map { FullWidth.multiplyDivideRounded($0, refund.parts, refund.whole) }
                let firstInMonth = months.month(of: refund.at).map { refundedMonths.insert($0).inserted } ?? false
                update(refund.at, purchaseSeries) { counts in
                    if firstInMonth { counts.refundedTransactions += 1 }
                    counts.refundMicros = FullWidth.add(counts.refundMicros, amount ?? 0)
                }
            }
        }
        for segment in priced.mrr {
            update(segment.start, periodSeries[segment.period]) { $0.mrrTwelfthsChange = FullWidth.add($0.mrrTwelfthsChange, segment.twelfths) }
            update(segment.end, periodSeries[segment.period]) { $0.mrrTwelfthsChange = FullWidth.subtract($0.mrrTwelfthsChange, segment.twelfths) }
        }
    }

    /// Rows with any non-zero value, from each series' first month through the as-of month.
    func rows(months: MonthTable, reportingCurrency: String?, fxRates: FXRates?) -> [RevenueMonthlyRow] {
        var rows: [RevenueMonthlyRow] = []
        for (index, series) in self.series.enumerated() where firstMonths[index] <= months.lastMonth {
            let first = firstMonths[index]
            var mrrTwelfths: Int64 = 0
            for month in first...months.lastMonth {
                let counts = self.counts[Key(month: month, series: index)] ?? Counts()
                mrrTwelfths = FullWidth.add(mrrTwelfths, counts.mrrTwelfthsChange)
                guard counts.grossMicros != 0 || counts.refundMicros != 0 || counts.transactions != 0
                        || counts.refundedTransactions != 0 || counts.unpricedTransactions != 0 || mrrTwelfths != 0 else { continue }
                let label = MonthTable.label(month)
                var row = RevenueMonthlyRow(
                    month: label, platform: series.platform, productId: series.productId, currency: series.currency,
                    gross: Money(micros: counts.grossMicros), refunds: Money(micros: counts.refundMicros),
                    transactions: counts.transactions, refundedTransactions: counts.refundedTransactions,
                    unpricedTransactions: counts.unpricedTransactions, listPricedOffers: counts.listPricedOffers,
                    assumedPaidPeriods: counts.assumedPaidPeriods, prorationPeriods: counts.prorationPeriods,
                    mrrEnd: Money(units: mrrTwelfths, unitsPerMicro: 12))
                if let reportingCurrency {
                    // A row without a currency holds only unpriced transactions (every amount 0): nothing to
                    // convert, so it needs no rate (and is no "missing rate").
                    let rate: ExchangeRate? = series.currency == reportingCurrency || series.currency.isEmpty
                        ? .one : fxRates?.rate(month: label, currency: series.currency)
                    row.converted = ConvertedRevenue(
                        gross: rate.map { row.gross.converted(by: $0) }, refunds: rate.map { row.refunds.converted(by: $0) },
                        net: rate.map { row.gross.converted(by: $0).writtenMinus(row.refunds.converted(by: $0)) },
                        mrrEnd: rate.map { row.mrrEnd.converted(by: $0) })
                }
                rows.append(row)
            }
        }
        return rows.sorted {
            ByteOrder.precedes([$0.month, $0.platform.rawValue, $0.productId, $0.currency],
                               [$1.month, $1.platform.rawValue, $1.productId, $1.currency])
        }
    }
}

extension RevenueAggregator {
    /// Adds `other`'s sums (of other subscriptions) to these: series are matched by platform, product and
    /// currency, whatever their numbers in either, and each keeps its earliest first month.
    mutating func merge(_ other: RevenueAggregator) {
        let mapped = other.series.map { index(of: $0) }
        for (theirs, first) in other.firstMonths.enumerated() {
            firstMonths[mapped[theirs]] = min(firstMonths[mapped[theirs]], first)
        }
        for (key, theirs) in other.counts {
            counts[Key(month: key.month, series: mapped[key.series]), default: Counts()].add(theirs)
        }
    }

    /// Series in byte order of platform, product and currency, each with its first month and its non-zero months
    /// in order: no series number is written, so the bytes do not depend on the order subscriptions arrived in.
    func encode(to writer: inout PartialWriter) {
        var cells = [[(month: Int, counts: Counts)]](repeating: [], count: series.count)
        for (key, value) in counts where !value.isZero { cells[key.series].append((key.month, value)) }
        let order = series.indices.sorted {
            ByteOrder.precedes([series[$0].platform.rawValue, series[$0].productId, series[$0].currency],
                               [series[$1].platform.rawValue, series[$1].productId, series[$1].currency])
        }
        writer.count(order.count)
        for index in order {
            writer.platform(series[index].platform)
            writer.string(series[index].productId)
            writer.string(series[index].currency)
            writer.optionalMonth(firstMonths[index] == Int.max ? nil : firstMonths[index])
            writer.count(cells[index].count)
            for cell in cells[index].sorted(by: { $0.month < $1.month }) {
                writer.int(cell.month)
                writer.signed(cell.counts.grossMicros)
                writer.signed(cell.counts.refundMicros)
                writer.count(cell.counts.transactions)
                writer.count(cell.counts.refundedTransactions)
                writer.count(cell.counts.unpricedTransactions)
                writer.count(cell.counts.listPricedOffers)
                writer.count(cell.counts.assumedPaidPeriods)
                writer.count(cell.counts.prorationPeriods)
                writer.signed(cell.counts.mrrTwelfthsChange)
            }
        }
    }

    /// The sums `encode` wrote, for a report over `months`.
    init(from reader: inout PartialReader, months: MonthTable) throws(PartialStateError) {
        self.init()
        for _ in 0..<(try reader.count()) {
            let index = index(of: SeriesKey(platform: try reader.platform(), productId: try reader.string(),
                                            currency: try reader.string()))
            guard index == series.count - 1 else { throw .damaged("a revenue series is written twice") }
            firstMonths[index] = try reader.optionalMonth(in: months) ?? Int.max
            for _ in 0..<(try reader.count()) {
                let key = Key(month: try reader.month(in: months), series: index)
                var value = Counts()
                (value.grossMicros, value.refundMicros) = (try reader.signed(), try reader.signed())
                (value.transactions, value.refundedTransactions, value.unpricedTransactions, value.listPricedOffers)
                    = (try reader.tally(), try reader.tally(), try reader.tally(), try reader.tally())
                (value.assumedPaidPeriods, value.prorationPeriods) = (try reader.tally(), try reader.tally())
                value.mrrTwelfthsChange = try reader.signed()
                guard counts.updateValue(value, forKey: key) == nil else { throw .damaged("a month is written twice") }
            }
        }
    }
}

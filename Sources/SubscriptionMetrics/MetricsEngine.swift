import Facts

/// Turns subscription histories into every table of `metrics.md`, streaming: each history is folded into
/// per-month aggregates as it arrives and then dropped, so memory grows with months × products, not with
/// subscriptions. One exception: an exact median needs every value, so `grace_recovery` keeps one 8-byte
/// duration per recovered billing episode (a million recoveries take 8 MB).
///
/// ```swift
/// var engine = MetricsEngine(options: options)
/// try ledger.forEachSubscription(buckets: 0...1023) { engine.add(builder.history(id: $1, facts: $2)) }
/// let tables = engine.finish()
/// ```
///
/// The state is mergeable: engines that folded disjoint sets of subscriptions (slices of the ledger, each holding
/// every subscription's whole history or none of it) ``merge(_:)`` into the engine of their union, whose
/// ``finish()`` gives the same tables as one engine that folded them all. Counts and money add, recovery times
/// are kept, and every rate and identity is computed in ``finish()``, after the merge. ``PartialState`` writes the
/// state to a file.
public struct MetricsEngine: Sendable {
    /// The as-of time, time zone, prices and currencies every table is computed with.
    public let options: ReportOptions
    private var months: MonthTable
    private var subscriptions = SubscriptionAggregator()
    private var revenue = RevenueAggregator()
    private var movements = MRRMovementAggregator()
    private var retention = RetentionAggregator()
    private var trials = TrialAggregator()
    private var grace = GraceAggregator()
    /// Purchase tokens only notifications name (``SubscriptionHistory/notifiedOnlyTokens``), first notified by the
    /// as-of time, by platform and product.
    private var notifiedOnly: [Platform: [String: Int]] = [:]
    /// Voided purchases no period holds (``SubscriptionHistory/unplacedRefunds``), voided by the as-of time, by
    /// platform and product.
    private var unplacedRefunds: [Platform: [String: Int]] = [:]

    /// An engine with nothing added yet; `options` fix the as-of time, time zone and prices for every table.
    public init(options: ReportOptions) {
        self.options = options
        months = MonthTable(asOf: options.asOf, timeZone: options.timeZone)
    }

    /// Adds one subscription (or one-time purchase subject). Call once per history; order does not matter.
    public mutating func add(_ history: SubscriptionHistory) {
        let timeline = Timeline(history: Self.trialsByLength(history, prices: options.prices, asOf: options.asOf),
                                asOf: options.asOf)
        let priced = PricedTimeline(timeline, prices: options.prices)
        subscriptions.add(timeline, months: &months)
        revenue.add(priced, prices: options.prices, months: &months)
        movements.add(priced, months: &months)
        retention.add(timeline, prices: options.prices, months: &months)
        trials.add(timeline, months: &months)
        grace.add(timeline, months: &months)
        for (statements, counts) in [(history.notifiedOnlyTokens, \Self.notifiedOnly),
                                     (history.unplacedRefunds, \Self.unplacedRefunds)] {
            for statement in statements where statement.at <= options.asOf {
                self[keyPath: counts][history.platform, default: [:]][statement.productId, default: 0] += 1
            }
        }
    }

    /// `history` with its first period made a free trial when it is assumed paid (``Period/isAssumedPaid``: a
    /// Google first order whose payloads showed no payment) and ran shorter than one billing period of its
    /// product, a day's slack: a subscription's first charge buys a whole period, so it was no charge of that
    /// product. The billing period is the price list's duration, else the one the first renewal a resource showed
    /// ran as sold: of the same product, proven paid, no proration, started by the as-of time, reached from this
    /// period through back-to-back periods (each within a day of the one before) that only orders filled in
    /// stand between (their lengths are inferred), and whose length (to the end it was sold with, before a
    /// deferral) is a whole billing duration. One ended sooner by a refund or a replacement says
    /// nothing and stays paid, and so does the first order of a later token of the chain (an upgrade's prorated
    /// order may run short); with neither duration nothing changes.
    static func trialsByLength(_ history: SubscriptionHistory, prices: PriceList, asOf: Millis) -> SubscriptionHistory {
        let day: Int64 = 86_400_000
        let byStart = history.periods.indices.sorted { history.periods[$0].start < history.periods[$1].start }
        guard let index = byStart.first else { return history }
        let period = history.periods[index]
        guard period.isAssumedPaid, period.revokedAt == nil || period.revocationReversedAt != nil,
              period.endReason != .replaced else { return history }
        var renewal: BillingDuration?
        var previousEnd = period.end
        for next in byStart.dropFirst().lazy.map({ history.periods[$0] }) {
            guard next.start <= asOf, !next.isTrial, !next.isAssumedPaid, !next.isProration,
                  next.productId == period.productId, abs(FullWidth.subtract(next.start, previousEnd)) <= day else { break }
            if next.isFilledIn {
                previousEnd = next.end
                continue
            }
            let sold = BillingDuration.inferred(lengthMillis: FullWidth.subtract(next.scheduledEnd ?? next.end, next.start))
            if sold.unit != .day { renewal = sold }
            break
        }
        guard let duration = prices.duration(platform: history.platform, productId: period.productId) ?? renewal,
              FullWidth.subtract(period.end, period.start) < (duration.shortestDays - 1) * day else { return history }
        var result = history
        result.periods[index].isTrial = true
        result.periods[index].isAssumedPaid = false
        return result
    }

    /// Adds `other`'s state: afterwards this engine is the one that would have folded the subscriptions of both.
    /// Each subscription must have been added to only one of them, whole. Throws, changing nothing, when `other`
    /// was made with other options (as-of, time zone, prices, reporting currency or FX rates), naming the option.
    public mutating func merge(_ other: MetricsEngine) throws(MetricsMergeError) {
        if let difference = options.difference(from: other.options) { throw difference }
        months.include(other.months)
        subscriptions.merge(other.subscriptions)
        revenue.merge(other.revenue)
        movements.merge(other.movements)
        retention.merge(other.retention)
        trials.merge(other.trials)
        grace.merge(other.grace)
        notifiedOnly.merge(other.notifiedOnly) { $0.merging($1, uniquingKeysWith: +) }
        unplacedRefunds.merge(other.unplacedRefunds) { $0.merging($1, uniquingKeysWith: +) }
    }

    /// The tables for everything added so far.
    public func finish() -> ReportTables {
        let revenueMonthly = revenue.rows(months: months, reportingCurrency: options.reportingCurrency, fxRates: options.fxRates)
        return ReportTables(
            subscriptionsMonthly: subscriptions.rows(months: months),
            revenueMonthly: revenueMonthly,
            mrrMovements: movements.rows(months: months, revenue: revenueMonthly, reportingCurrency: options.reportingCurrency,
                                         fxRates: options.fxRates),
            retentionCohorts: retention.rows(months: months),
            trialConversion: trials.rows(),
            graceRecovery: grace.rows(),
            reportingCurrency: options.reportingCurrency,
            notifiedOnlyTokens: ProductCount.list(notifiedOnly),
            unplacedRefunds: ProductCount.list(unplacedRefunds))
    }
}

extension MetricsEngine {
    /// The options, then the months and every aggregator's state: the body of a partial-state file.
    func encode(to writer: inout PartialWriter) {
        options.encode(to: &writer)
        months.encode(to: &writer)
        subscriptions.encode(to: &writer)
        revenue.encode(to: &writer)
        movements.encode(to: &writer)
        retention.encode(to: &writer)
        trials.encode(to: &writer)
        grace.encode(to: &writer)
        for counts in [notifiedOnly, unplacedRefunds] {
            let products = ProductCount.list(counts)
            writer.count(products.count)
            for product in products {
                writer.platform(product.platform)
                writer.string(product.productId)
                writer.count(product.transactions)
            }
        }
    }

    /// The engine `encode` wrote.
    init(from reader: inout PartialReader) throws(PartialStateError) {
        options = try ReportOptions(from: &reader)
        months = try MonthTable(from: &reader, asOf: options.asOf, timeZone: options.timeZone)
        subscriptions = try SubscriptionAggregator(from: &reader, months: months)
        revenue = try RevenueAggregator(from: &reader, months: months)
        movements = try MRRMovementAggregator(from: &reader, months: months)
        retention = try RetentionAggregator(from: &reader, months: months)
        trials = try TrialAggregator(from: &reader, months: months)
        grace = try GraceAggregator(from: &reader, months: months)
        notifiedOnly = try Self.productCounts(from: &reader, of: "notified-only tokens")
        unplacedRefunds = try Self.productCounts(from: &reader, of: "unplaced refunds")
    }

    /// A count per platform and product, as `encode` wrote it.
    private static func productCounts(from reader: inout PartialReader,
                                      of what: String) throws(PartialStateError) -> [Platform: [String: Int]] {
        var counts: [Platform: [String: Int]] = [:]
        for _ in 0..<(try reader.count()) {
            let (platform, productId) = (try reader.platform(), try reader.string())
            guard counts[platform, default: [:]].updateValue(try reader.tally(), forKey: productId) == nil else {
                throw .damaged("a product's \(what) are repeated")
            }
        }
        return counts
    }
}

import Facts

/// One subscription's timeline with each paid period's price resolved once (DESIGN.md "Price resolution") and
/// its monthly recurring revenue as a step function of time.
///
/// `revenue_monthly` (gross, refunds, `mrr_end`) and `mrr_movements` both read this, so the two tables take
/// every price and every monthly amount from one place and can never disagree about one.
struct PricedTimeline: Sendable {
    /// The price of one paid period: its currency (the period's own, else the subscription's first) and its price
    /// in micros (the payload's, else the price list's for that currency); each `nil` when unknown.
    struct Price: Sendable {
        var currency: String?
        var micros: Int64?
    }

    /// A stretch of `paid` state backed by a priced period: the subscription's MRR is `twelfths` (twelfths of a
    /// micro, see ``BillingDuration/monthlyTwelfths(ofMicros:)``) of `currency` over `[start, end)` (ms, UTC).
    struct MRRSegment: Sendable {
        var start: Millis
        var end: Millis
        /// Index of the period in ``SubscriptionHistory/periods``.
        var period: Int
        var currency: String
        var twelfths: Int64
    }

    let timeline: Timeline
    /// By period index: the resolved price of each paid period started by the as-of time; trials and periods
    /// after the as-of time have neither currency nor price.
    let prices: [Price]
    /// The priced segments of the paid spells, in time order and not overlapping (a segment of an unpriced
    /// period, or of one whose price is not positive, is left out: MRR counts only priced periods). The MRR at the end of a month that ends at `x` is
    /// the segment's with `start < x <= end`, or 0.
    let mrr: [MRRSegment]

    init(_ timeline: Timeline, prices list: PriceList) {
        self.timeline = timeline
        let history = timeline.history
        var prices = [Price](repeating: Price(), count: history.periods.count)
        for (index, period) in history.periods.enumerated() where !period.isTrial && period.start <= timeline.asOf {
            let currency = period.currency ?? history.currencies.first
            prices[index] = Price(currency: currency, micros: currency.flatMap { currency in
                period.priceMicros ?? list.priceMicros(platform: history.platform, productId: period.productId, currency: currency)
            })
        }
        var mrr: [MRRSegment] = []
        for spell in timeline.spells {
            for segment in spell.segments {
                guard let currency = prices[segment.period].currency, let micros = prices[segment.period].micros else { continue }
                let duration = timeline.paidTerm(of: history.periods[segment.period], prices: list)
                let twelfths = duration.monthlyTwelfths(ofMicros: micros)
                guard twelfths > 0 else { continue }
                mrr.append(MRRSegment(start: segment.start, end: segment.end, period: segment.period, currency: currency,
                                      twelfths: twelfths))
            }
        }
        self.prices = prices
        self.mrr = mrr
    }
}

import Facts

/// Why a paid spell ended (`metrics.md` churn reasons).
enum ChurnReason: Sendable {
    case voluntary, involuntary, refund, paused, other
}

/// A stretch of time in one state backed by one period: the period's own (non-revoked) access, or the grace
/// phase that follows it (grace keeps the state, product and price of the period it follows).
struct Segment: Sendable {
    /// First instant (ms, UTC), inclusive.
    var start: Millis
    /// End (ms, UTC), exclusive; `start < end`.
    var end: Millis
    /// Index of the period in ``SubscriptionHistory/periods``.
    var period: Int
}

/// A maximal run of `paid` state: segments that touch, in time order.
struct Spell: Sendable {
    var segments: [Segment]
    var start: Millis
    var end: Millis
    var reason: ChurnReason

    /// The segment current just before `instant` (`start < instant <= end`), i.e. at the last instant of the
    /// month that ends at `instant`.
    func segment(justBefore instant: Millis) -> Segment? {
        segments.first { $0.start < instant && instant <= $0.end }
    }
}

/// One subscription's state timeline as of the as-of time, computed once per history (DESIGN.md "Timelines").
///
/// Everything after the as-of time is cut: periods starting after it are left out, revocations after it are
/// ignored, and episode outcomes after it count as open. Ends after the as-of time are kept as they are; the
/// month arithmetic never looks past the as-of time.
struct Timeline: Sendable {
    let history: SubscriptionHistory
    let asOf: Millis
    /// Paid spells in time order.
    private(set) var spells: [Spell] = []
    /// Trial segments in time order, not overlapping.
    private(set) var trialSegments: [Segment] = []
    /// Episodes whose E is at or before the as-of time.
    let episodes: [BillingEpisode]
    /// The periods a change of plan ended (``EndReason/replaced``), in the history's order: few, and what
    /// ``replaced(before:)`` searches for every period (searching all periods made a token of thousands of
    /// renewals quadratic).
    private let replacedPeriods: [Period]

    init(history: SubscriptionHistory, asOf: Millis) {
        self.history = history
        self.asOf = asOf
        episodes = history.episodes.filter { $0.failedAt <= asOf }
        replacedPeriods = history.periods.filter { $0.endReason == .replaced }
        var paid: [Segment] = []
        var trial: [Segment] = []
        for (index, period) in history.periods.enumerated() where period.start <= asOf {
            let end = accessEnd(of: period)
            guard end > period.start else { continue }
            let segment = Segment(start: period.start, end: end, period: index)
            if period.isTrial { trial.append(segment) } else { paid.append(segment) }
        }
        var involuntaryEnds: Set<Millis> = []
        var refundEnds: Set<Millis> = []
        // A revocation ends its period's access (at its end too: a Google resource fetched after a revocation shows
        // the revocation as the order's expiry); one after the end refunds a period already over, and ends nothing.
        for period in history.periods where period.start <= asOf {
            if let revokedAt = revocation(of: period), revokedAt <= period.end { refundEnds.insert(revokedAt) }
        }
        for episode in episodes {
            // A spell ending at G (or at E without grace) ends for the billing issue. One ending earlier inside
            // the grace (cancelled or refunded there) takes its reason from the period, like any other end.
            involuntaryEnds.insert(episode.failedAt)
            involuntaryEnds.insert(episode.graceEnd)
            var graceEnd = min(episode.graceEnd, Self.outcomeTime(episode))
            guard let index = followedPeriod(endingAt: episode.failedAt) else { continue }
            // The period the grace follows refunded inside it: access ends there, for the refund.
            if let revokedAt = revocation(of: history.periods[index]), revokedAt >= episode.failedAt,
               revokedAt < episode.graceEnd, revokedAt <= graceEnd {
                graceEnd = revokedAt
                refundEnds.insert(revokedAt)
            }
            guard graceEnd > episode.failedAt else { continue }
            let segment = Segment(start: episode.failedAt, end: graceEnd, period: index)
            if history.periods[index].isTrial { trial.append(segment) } else { paid.append(segment) }
        }
        let paidSegments = Self.normalized(paid)
        trialSegments = Self.removing(paidSegments, from: Self.normalized(trial))
        for segment in paidSegments {
            if let last = spells.indices.last, segment.start <= spells[last].end {
                spells[last].segments.append(segment)
                spells[last].end = max(spells[last].end, segment.end)
            } else {
                spells.append(Spell(segments: [segment], start: segment.start, end: segment.end, reason: .other))
            }
        }
        for index in spells.indices {
            let spell = spells[index]
            let lastPeriod = history.periods[spell.segments[spell.segments.count - 1].period]
            if refundEnds.contains(spell.end) {
                spells[index].reason = .refund
            } else if involuntaryEnds.contains(spell.end) {
                spells[index].reason = .involuntary
            } else {
                switch lastPeriod.endReason {
                case .paused: spells[index].reason = .paused
                case .voluntary: spells[index].reason = .voluntary
                case .billingIssue: spells[index].reason = .involuntary
                case .replaced, .priceIncrease, .productUnavailable, .developerCancel, .unknown: spells[index].reason = .other
                }
            }
        }
    }

    /// The revocation time of `period` if it is at or before the as-of time and no reversal by then undid it.
    func revocation(of period: Period) -> Millis? {
        guard let revokedAt = period.revokedAt, revokedAt <= asOf,
              period.revocationReversedAt.map({ $0 > asOf }) ?? true else { return nil }
        return revokedAt
    }

    /// Where access granted by `period` ends: its end, or its revocation if earlier.
    func accessEnd(of period: Period) -> Millis {
        min(period.end, revocation(of: period) ?? period.end)
    }

    /// Length (ms) of the billing period `period` was sold as: to the end it was sold with (before an upgrade or
    /// replacement cut it short, or an extension lengthened it, ``Period/scheduledEnd``), from its start, or, for
    /// a period that recovered a billing issue inside grace and so kept the old renewal date, from the failed
    /// renewal E. (Only a renewal of the product that failed keeps that date: another product bought in grace,
    /// an upgrade, starts a whole period of its own.)
    func nominalLength(of period: Period) -> Int64 {
        let soldEnd = period.scheduledEnd ?? period.end
        for episode in episodes {
            if case .recovered(let at) = episode.outcome, at == period.start, at < episode.graceEnd, episode.failedAt < period.start,
               history.periods.contains(where: { $0.end == episode.failedAt && $0.productId == period.productId }) {
                return FullWidth.subtract(soldEnd, episode.failedAt)
            }
        }
        return FullWidth.subtract(soldEnd, period.start)
    }

    /// The billing term `period`'s price pays for, which its MRR is normalised by: the price list's duration for
    /// the product (a listed price is that duration's, however long a period of it ran: deferred, extended,
    /// started late), else the length inferred, except for a period whose payload states a price for another
    /// term. That is a period of a whole billing duration (P1W to P1Y, ±2 days) that ran as sold, and either
    /// - an introductory offer (three months paid up front on a monthly plan), or
    /// - at a stated price other than the list's for its product and currency: another plan of the product
    ///   (Google base plans of one subscription, Apple's monthly billing of a yearly commitment), which one price
    ///   list row per product cannot name; the first period after a change of plan only when it is a whole period
    ///   of the new plan (after a deferred change, or charged in full), not one running to the old renewal date or
    ///   the credit's worth of time.
    /// Such a period takes its own length.
    func paidTerm(of period: Period, prices list: PriceList) -> BillingDuration {
        let sold = BillingDuration.inferred(lengthMillis: nominalLength(of: period))
        guard let stated = period.priceMicros, sold.unit != .day,
              period.endReason != .replaced || period.scheduledEnd != nil else { return listedTerm(of: period, prices: list) }
        if period.isIntroductory { return sold }
        guard let currency = period.currency ?? history.currencies.first,
              let listedPrice = list.priceMicros(platform: history.platform, productId: period.productId, currency: currency),
              listedPrice != stated else { return listedTerm(of: period, prices: list) }
        if let replaced = replaced(before: period) {
            // The first order after a change of plan is a whole period of the new plan after a deferred change (the
            // old period ran to its end) or when charged in full (at least as long as the replaced plan's: a yearly
            // base plan of a product listed monthly); else it ran the credit's worth or the old period's rest.
            let deferred = (replaced.scheduledEnd ?? replaced.end) <= replaced.end
            let replacedTerm = BillingDuration.inferred(lengthMillis: nominalLength(of: replaced))
            guard deferred || sold.shortestDays >= replacedTerm.shortestDays else { return listedTerm(of: period, prices: list) }
        }
        return sold
    }

    /// The term `period`'s plan renews at, which a retention cohort counts its periods by: ``paidTerm(of:prices:)``,
    /// except for an introductory offer, whose length (three months paid up front) is not the plan's.
    func renewalTerm(of period: Period, prices list: PriceList) -> BillingDuration {
        period.isIntroductory ? listedTerm(of: period, prices: list) : paidTerm(of: period, prices: list)
    }

    /// The price list's duration for `period`'s product, else the one its length suggests. A Google proration
    /// period's length is the credit's worth of time, no billing term: it takes the term of the renewal after it
    /// (its product's next period, started by the as-of time), else the one of the period its change of plan
    /// replaced (a base plan and its add-ons share one billing period; a change to another billing period is
    /// misread until its renewal shows), else its own length. So does the first order after a Google change of
    /// plan that cut the old period short (an immediate change), which runs the credit's worth or what was left
    /// of the old period (time proration, a prorated charge, no proration) unless it was charged in full (a whole
    /// period of the new plan): its own length counts only as a whole billing duration at least as long as the
    /// replaced plan's. After a deferred change (the old period ran to its end) the order is a whole period of
    /// the new plan, whatever its length.
    private func listedTerm(of period: Period, prices list: PriceList) -> BillingDuration {
        if let listed = list.duration(platform: history.platform, productId: period.productId) { return listed }
        let own = BillingDuration.inferred(lengthMillis: nominalLength(of: period))
        let afterAnImmediateChange = history.platform == .google
            && replaced(before: period).map { ($0.scheduledEnd ?? $0.end) > $0.end } == true
        guard period.isProration || afterAnImmediateChange else { return own }
        func term(_ other: Period) -> BillingDuration? {
            guard !other.isProration, !other.isTrial, !other.isIntroductory else { return nil }
            let sold = BillingDuration.inferred(lengthMillis: nominalLength(of: other))
            return sold.unit == .day ? nil : sold
        }
        // The renewal after it, not an earlier period of the product: one product may have several base plans.
        let renewal = history.periods.lazy.filter {
            $0.productId == period.productId && $0.start >= period.end && $0.start <= asOf
        }.compactMap(term).first
        if let renewal { return renewal }
        let replacedTerm = replaced(before: period).flatMap(term)
        if !period.isProration, let replacedTerm, own.unit != .day, own.shortestDays >= replacedTerm.shortestDays { return own }
        return replacedTerm ?? own
    }

    /// The latest period a change of plan replaced that ended within a day before `period` began.
    private func replaced(before period: Period) -> Period? {
        replacedPeriods.last { other in
            other.end <= period.start && FullWidth.subtract(period.start, other.end) <= 86_400_000
        }
    }

    /// The outcome time (T or L) of `episode` if it is at or before the as-of time; `nil` for an episode open at
    /// the as-of time.
    func outcomeTime(_ episode: BillingEpisode) -> Millis? {
        let time = Self.outcomeTime(episode)
        return time <= asOf ? time : nil
    }

    /// T or L, whatever the as-of time.
    private static func outcomeTime(_ episode: BillingEpisode) -> Millis {
        switch episode.outcome {
        case .recovered(let at), .lost(let at): at
        }
    }

    /// The latest period (started by the as-of time) whose access ends at `instant`.
    private func followedPeriod(endingAt instant: Millis) -> Int? {
        history.periods.indices.last { index in
            let period = history.periods[index]
            return period.start <= asOf && period.start < instant && accessEnd(of: period) == instant
        }
    }

    /// `segments` without the instants `covering` covers: one state at each instant (`metrics.md`), so a trial
    /// that Apple renewed early into a paid period is paid from that period's start, not both at once.
    private static func removing(_ covering: [Segment], from segments: [Segment]) -> [Segment] {
        segments.flatMap { segment in
            var pieces = [segment]
            for cover in covering where cover.start < segment.end && segment.start < cover.end {
                pieces = pieces.flatMap { piece -> [Segment] in
                    guard cover.start < piece.end, piece.start < cover.end else { return [piece] }
                    var kept: [Segment] = []
                    if piece.start < cover.start { kept.append(Segment(start: piece.start, end: cover.start, period: piece.period)) }
                    if cover.end < piece.end { kept.append(Segment(start: cover.end, end: piece.end, period: piece.period)) }
                    return kept
                }
            }
            return pieces
        }
    }

    /// Segments sorted by start with overlaps removed: where a segment starts inside the previous one, the
    /// newer one takes over from its start (an upgrade whose old period was not cut), and a segment lying wholly
    /// inside the previous one adds nothing.
    private static func normalized(_ segments: [Segment]) -> [Segment] {
        let sorted = segments.sorted { ($0.start, $0.end, $0.period) < ($1.start, $1.end, $1.period) }
        var result: [Segment] = []
        result.reserveCapacity(sorted.count)
        for segment in sorted {
            if let last = result.last, segment.start < last.end {
                if segment.end <= last.end { continue }
                if last.start < segment.start {
                    result[result.count - 1].end = segment.start
                } else {
                    result.removeLast()
                }
            }
            result.append(segment)
        }
        return result
    }
}

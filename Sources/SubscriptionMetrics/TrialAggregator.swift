import Facts

/// Builds `trial_conversion`: each subscription's first trial, by the month it started, platform and product,
/// classified as converted, abandoned or pending at the as-of time (DESIGN.md "Timelines").
struct TrialAggregator: Sendable {
    private struct Key: Hashable {
        var month: Int
        var platform: Platform
        var productId: String
    }

    private struct Counts: Sendable {
        var trials = 0, converted = 0, abandoned = 0, pending = 0

        mutating func add(_ other: Counts) {
            trials += other.trials
            converted += other.converted
            abandoned += other.abandoned
            pending += other.pending
        }
    }

    private var counts: [Key: Counts] = [:]

    /// A failed renewal this close (ms) to the trial's end follows the trial directly; so does a period starting
    /// up to this long after it.
    private static let tolerance: Millis = 1_000

    mutating func add(_ timeline: Timeline, months: inout MonthTable) {
        let history = timeline.history
        let periods = history.periods.filter { $0.start <= timeline.asOf }
        guard let first = periods.first(where: \.isTrial), let month = months.month(of: first.start) else { return }
        // A period that starts after the trial began and no later than its end (give or take the tolerance)
        // follows it with no expiry in between: back to back, or overlapping it, as a renewal Apple charged
        // before the old expiry does (`purchase_date_ms` minutes to hours before the trial's `expires_date_ms`).
        func follows(_ period: Period, _ end: Millis) -> Bool {
            period.start > first.start && FullWidth.subtract(period.start, end) <= Self.tolerance
        }
        // Back-to-back trial periods (e.g. one order per trial week) are one trial.
        var trialEnd = timeline.accessEnd(of: first)
        for period in periods where period.isTrial && follows(period, trialEnd) {
            trialEnd = max(trialEnd, timeline.accessEnd(of: period))
        }
        let followingEpisodes = timeline.episodes.filter { abs(FullWidth.subtract($0.failedAt, trialEnd)) <= Self.tolerance }
        let paidAtEnd = periods.contains { !$0.isTrial && follows($0, trialEnd) }
        let recovered = followingEpisodes.contains { episode in
            if case .recovered = episode.outcome { return timeline.outcomeTime(episode) != nil }
            return false
        }
        let stillOpen = followingEpisodes.contains { timeline.outcomeTime($0) == nil }
        var update = counts[Key(month: month, platform: history.platform, productId: first.productId), default: Counts()]
        update.trials += 1
        if paidAtEnd || recovered {
            update.converted += 1
        } else if trialEnd <= timeline.asOf && !stillOpen {
            update.abandoned += 1
        } else {
            update.pending += 1
        }
        counts[Key(month: month, platform: history.platform, productId: first.productId)] = update
    }

    func rows() -> [TrialConversionRow] {
        counts.map { key, counts in
            TrialConversionRow(cohortMonth: MonthTable.label(key.month), platform: key.platform, productId: key.productId,
                               trials: counts.trials, converted: counts.converted, abandoned: counts.abandoned,
                               pending: counts.pending)
        }.sorted {
            ByteOrder.precedes([$0.cohortMonth, $0.platform.rawValue, $0.productId],
                               [$1.cohortMonth, $1.platform.rawValue, $1.productId])
        }
    }
}

extension TrialAggregator {
    /// Adds `other`'s trials (of other subscriptions) to these.
    mutating func merge(_ other: TrialAggregator) {
        for (key, theirs) in other.counts {
            counts[key, default: Counts()].add(theirs)
        }
    }

    /// The cohorts in byte order of platform and product, then month.
    func encode(to writer: inout PartialWriter) {
        let keys = counts.keys.sorted {
            $0.platform != $1.platform || $0.productId != $1.productId
                ? ByteOrder.precedes([$0.platform.rawValue, $0.productId], [$1.platform.rawValue, $1.productId])
                : $0.month < $1.month
        }
        writer.count(keys.count)
        for key in keys {
            let value = counts[key] ?? Counts()
            writer.platform(key.platform)
            writer.string(key.productId)
            writer.int(key.month)
            for count in [value.trials, value.converted, value.abandoned, value.pending] { writer.count(count) }
        }
    }

    /// The cohorts `encode` wrote, for a report over `months`.
    init(from reader: inout PartialReader, months: MonthTable) throws(PartialStateError) {
        self.init()
        for _ in 0..<(try reader.count()) {
            let platform = try reader.platform()
            let productId = try reader.string()
            let key = Key(month: try reader.month(in: months), platform: platform, productId: productId)
            var value = Counts()
            (value.trials, value.converted, value.abandoned, value.pending)
                = (try reader.tally(), try reader.tally(), try reader.tally(), try reader.tally())
            guard counts.updateValue(value, forKey: key) == nil else { throw .damaged("a trial cohort is written twice") }
        }
    }
}

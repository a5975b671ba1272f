import Facts

/// Builds `grace_recovery`: billing-issue episodes by the month of E and platform. Recovery times are kept per
/// row (one integer per recovered episode) because an exact median needs them.
struct GraceAggregator: Sendable {
    private struct Key: Hashable {
        var month: Int
        var platform: Platform
    }

    private struct Counts: Sendable {
        var episodes = 0, withGrace = 0, recoveredInGrace = 0, recoveredInRetry = 0, lost = 0, open = 0
        /// T − E (ms) of each recovered episode.
        var recoveryMillis: [Int64] = []

        mutating func add(_ other: Counts) {
            episodes += other.episodes
            withGrace += other.withGrace
            recoveredInGrace += other.recoveredInGrace
            recoveredInRetry += other.recoveredInRetry
            lost += other.lost
            open += other.open
            recoveryMillis += other.recoveryMillis
        }
    }

    private var counts: [Key: Counts] = [:]

    mutating func add(_ timeline: Timeline, months: inout MonthTable) {
        for episode in timeline.episodes {
            guard let month = months.month(of: episode.failedAt) else { continue }
            let key = Key(month: month, platform: timeline.history.platform)
            counts[key, default: Counts()].episodes += 1
            if episode.graceEnd > episode.failedAt { counts[key, default: Counts()].withGrace += 1 }
            switch (episode.outcome, timeline.outcomeTime(episode)) {
            case (.recovered(let at), .some):
                if at < episode.graceEnd {
                    counts[key, default: Counts()].recoveredInGrace += 1
                } else {
                    counts[key, default: Counts()].recoveredInRetry += 1
                }
                counts[key, default: Counts()].recoveryMillis.append(FullWidth.subtract(at, episode.failedAt))
            case (.lost, .some):
                counts[key, default: Counts()].lost += 1
            default:
                counts[key, default: Counts()].open += 1
            }
        }
    }

    func rows() -> [GraceRecoveryRow] {
        counts.map { key, counts in
            GraceRecoveryRow(month: MonthTable.label(key.month), platform: key.platform, episodes: counts.episodes,
                             withGrace: counts.withGrace, recoveredInGrace: counts.recoveredInGrace,
                             recoveredInRetry: counts.recoveredInRetry, lost: counts.lost, open: counts.open,
                             medianHoursToRecover: Self.medianHours(counts.recoveryMillis))
        }.sorted { ByteOrder.precedes([$0.month, $0.platform.rawValue], [$1.month, $1.platform.rawValue]) }
    }

    private static func medianHours(_ values: [Int64]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        let millis = sorted.count % 2 == 1
            ? Double(sorted[middle])
            : (Double(sorted[middle - 1]) + Double(sorted[middle])) / 2
        return millis / 3_600_000
    }
}

extension GraceAggregator {
    /// Adds `other`'s episodes (of other subscriptions) to these; the recovery times of both are kept, so the
    /// median over the merged rows is the exact median of all of them.
    mutating func merge(_ other: GraceAggregator) {
        for (key, theirs) in other.counts {
            counts[key, default: Counts()].add(theirs)
        }
    }

    /// The rows in byte order of platform, then month; recovery times sorted and written as differences from the
    /// previous one (a million recoveries within 60 days take about 2 bytes each).
    func encode(to writer: inout PartialWriter) {
        let keys = counts.keys.sorted { $0.platform != $1.platform ? $0.platform < $1.platform : $0.month < $1.month }
        writer.count(keys.count)
        for key in keys {
            let value = counts[key] ?? Counts()
            writer.platform(key.platform)
            writer.int(key.month)
            for count in [value.episodes, value.withGrace, value.recoveredInGrace, value.recoveredInRetry, value.lost, value.open] {
                writer.count(count)
            }
            writer.count(value.recoveryMillis.count)
            // Sorted, so every difference after the first is ≥ 0 and fits in 64 unsigned bits (wrapping arithmetic
            // writes and reads it exactly).
            let sorted = value.recoveryMillis.sorted()
            for (index, millis) in sorted.enumerated() {
                if index == 0 { writer.signed(millis) } else { writer.unsigned(UInt64(bitPattern: millis &- sorted[index - 1])) }
            }
        }
    }

    /// The rows `encode` wrote, for a report over `months`.
    init(from reader: inout PartialReader, months: MonthTable) throws(PartialStateError) {
        self.init()
        for _ in 0..<(try reader.count()) {
            let platform = try reader.platform()
            let key = Key(month: try reader.month(in: months), platform: platform)
            var value = Counts()
            (value.episodes, value.withGrace, value.recoveredInGrace, value.recoveredInRetry, value.lost, value.open)
                = (try reader.tally(), try reader.tally(), try reader.tally(), try reader.tally(), try reader.tally(), try reader.tally())
            let recoveries = try reader.count()
            value.recoveryMillis.reserveCapacity(recoveries)
            for index in 0..<recoveries {
                value.recoveryMillis.append(index == 0
                    ? try reader.signed()
                    : value.recoveryMillis[index - 1] &+ Int64(bitPattern: try reader.unsigned()))
            }
            guard counts.updateValue(value, forKey: key) == nil else { throw .damaged("a grace month is written twice") }
        }
    }
}

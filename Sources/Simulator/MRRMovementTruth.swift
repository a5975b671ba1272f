/// `mrr_movements` of metrics.md, from the simulated subscriptions' MRR at the month boundaries (DESIGN.md's
/// decisions: rows, rounding). `TruthCalculator` tells it each subscription's MRR at the start and the end of
/// every month; the rows take `mrr_end` from the truth's own revenue_monthly MRR per product.
struct MRRMovementTruth {
    /// A subscription's MRR at an instant: its currency and twelve times its monthly price, in micros.
    struct MRR: Equatable {
        var currency: String
        var mrr12: Int64
    }

    /// The CSV's movement columns, in their order.
    enum Kind: Int, CaseIterable {
        case new, expansion, contraction, churned, reactivation

        var adds: Bool { self == .new || self == .expansion || self == .reactivation }
    }

    struct Key: Hashable {
        var month: Int
        var platform: String
        var currency: String
    }

    /// Amounts (twelve times micros) and subscriptions, by ``Kind``.
    private struct Sums {
        var mrr12 = [Int64](repeating: 0, count: Kind.allCases.count)
        var count = [Int](repeating: 0, count: Kind.allCases.count)
    }

    private var sums: [Key: Sums] = [:]

    /// One subscription in month `month`: its MRR at the month's start and at its end (`nil`: not paid, or no
    /// price); `paidBefore`: it was in paid state at some instant before the month started.
    mutating func record(month: Int, platform: String, start: MRR?, end: MRR?, paidBefore: Bool) {
        func add(_ kind: Kind, _ currency: String, _ amount: Int64) {
            var entry = sums[Key(month: month, platform: platform, currency: currency), default: Sums()]
            entry.mrr12[kind.rawValue] += amount
            entry.count[kind.rawValue] += 1
            sums[Key(month: month, platform: platform, currency: currency)] = entry
        }
        if let start, let end, start.currency == end.currency {
            if end.mrr12 > start.mrr12 { add(.expansion, end.currency, end.mrr12 - start.mrr12) }
            if end.mrr12 < start.mrr12 { add(.contraction, end.currency, start.mrr12 - end.mrr12) }
            return
        }
        if let start { add(.churned, start.currency, start.mrr12) }
        if let end { add(paidBefore || start != nil ? .reactivation : .new, end.currency, end.mrr12) }
    }

    /// The rows through month index `lastMonth`, sorted by month, platform, currency. `productMRR` holds, per
    /// month × platform × currency, the exact MRR at the month's end of each product (twelve times micros), as
    /// revenue_monthly rounds them one by one into its `mrr_end` cells.
    func rows(lastMonth: Int, labels: [String], productMRR: [Key: [Int64]]) -> [[(String, String)]] {
        var series = Set(sums.keys.map { [$0.platform, $0.currency] })
        for key in productMRR.keys { series.insert([key.platform, key.currency]) }
        var rows: [([String], [(String, String)])] = []
        for pair in series {
            let (platform, currency) = (pair[0], pair[1])
            for month in 0...lastMonth {
                let before = month == 0 ? [] : productMRR[Key(month: month - 1, platform: platform, currency: currency)] ?? []
                let after = productMRR[Key(month: month, platform: platform, currency: currency)] ?? []
                let moved = sums[Key(month: month, platform: platform, currency: currency)] ?? Sums()
                guard !before.isEmpty || !after.isEmpty || moved.count.contains(where: { $0 > 0 }) else { continue }
                // The written start and end: the sums of the rounded per-product cells.
                let start = before.map { Money.cents($0, divisor: 12_000_000) }.reduce(0, +)
                let end = after.map { Money.cents($0, divisor: 12_000_000) }.reduce(0, +)
                let amounts = Self.addingUp(moved.mrr12.map { Money.cents($0, divisor: 12_000_000) },
                                            exact: moved.mrr12, counts: moved.count, to: end - start)
                let label = labels[month]
                var row: [(String, String)] = [("month", label), ("platform", platform), ("currency", currency),
                                               ("mrr_start", Money.text(cents: start))]
                for kind in Kind.allCases { row.append(("\(kind)", Money.text(cents: amounts[kind.rawValue]))) }
                row.append(("mrr_end", Money.text(cents: end)))
                for kind in Kind.allCases { row.append(("\(kind)_count", "\(moved.count[kind.rawValue])")) }
                rows.append(([label, platform, currency], row))
            }
        }
        return rows.sorted { a, b in
            for (x, y) in zip(a.0, b.0) where x != y { return x.utf8.lexicographicallyPrecedes(y.utf8) }
            return false
        }.map(\.1)
    }

    /// The rounded movements (cents), moved as little as needed to add up to `target` cents: what is missing goes
    /// first to the movement with the largest exact amount (ties: column order) as far as it can without going
    /// below zero, then the next; only movements some subscription made take any; what none can take is
    /// expansion (up) or contraction (down).
    static func addingUp(_ rounded: [Int64], exact: [Int64], counts: [Int], to target: Int64) -> [Int64] {
        var amounts = rounded
        var missing = target
        for kind in Kind.allCases { missing -= kind.adds ? amounts[kind.rawValue] : -amounts[kind.rawValue] }
        let order = Kind.allCases.filter { counts[$0.rawValue] > 0 }
            .sorted { exact[$0.rawValue] == exact[$1.rawValue] ? $0.rawValue < $1.rawValue : exact[$0.rawValue] > exact[$1.rawValue] }
        for kind in order where missing != 0 {
            let i = kind.rawValue
            let grows = (missing > 0) == kind.adds
            if grows {
                amounts[i] += abs(missing)
                missing = 0
            } else {
                let taken = min(abs(missing), amounts[i])
                amounts[i] -= taken
                missing += missing > 0 ? -taken : taken
            }
        }
        if missing > 0 { amounts[Kind.expansion.rawValue] += missing }
        if missing < 0 { amounts[Kind.contraction.rawValue] -= missing }
        return amounts
    }
}

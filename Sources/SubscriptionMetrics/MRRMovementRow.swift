import Facts

/// One row of `mrr_movements.csv`: why the MRR of a month × platform × currency changed, amounts in that
/// currency (`metrics.md` "mrr_movements").
///
/// Invariants, on the written (cent) amounts: `mrrEnd == mrrStart + new + expansion + reactivation − contraction
/// − churned`; `mrrStart` is the previous month's `mrrEnd` (0 when that month has no row); `mrrEnd` is the sum
/// of the month's `revenue_monthly` `mrr_end` cells of the platform and currency. Every amount is ≥ 0.
public struct MRRMovementRow: Sendable, Hashable {
    /// `YYYY-MM` in the reporting time zone.
    public var month: String
    public var platform: Platform
    /// ISO 4217 currency of the prices.
    public var currency: String
    /// MRR at the start of the month (just before its first instant).
    public var mrrStart: Money
    public var new: Money
    public var expansion: Money
    public var contraction: Money
    public var churned: Money
    public var reactivation: Money
    /// MRR at the end of the month (for the as-of month: at the as-of time).
    public var mrrEnd: Money
    /// Subscriptions behind each movement.
    public var newCount: Int
    public var expansionCount: Int
    public var contractionCount: Int
    public var churnedCount: Int
    public var reactivationCount: Int
    /// The amounts in the reporting currency, present when `--currency` is given (`nil` inside when the FX file
    /// has no rate for the month and currency).
    public var converted: ConvertedMRRMovement?

    public static let columns = [
        "month", "platform", "currency", "mrr_start", "new", "expansion", "contraction", "churned", "reactivation",
        "mrr_end", "new_count", "expansion_count", "contraction_count", "churned_count", "reactivation_count",
    ]

    /// Like revenue_monthly's: each amount column with `_converted`, in column order, after the last column.
    public static let convertedColumns = [
        "mrr_start_converted", "new_converted", "expansion_converted", "contraction_converted", "churned_converted",
        "reactivation_converted", "mrr_end_converted",
    ]

    /// The row's cells in column order (``columns``, then ``convertedColumns`` when converted).
    public var cells: [Cell] {
        var cells: [Cell] = [.text(month), .text(platform.rawValue), .text(currency), .money(mrrStart), .money(new),
                             .money(expansion), .money(contraction), .money(churned), .money(reactivation), .money(mrrEnd),
                             .count(newCount), .count(expansionCount), .count(contractionCount), .count(churnedCount),
                             .count(reactivationCount)]
        if let converted {
            cells += [converted.mrrStart, converted.new, converted.expansion, converted.contraction, converted.churned,
                      converted.reactivation, converted.mrrEnd].map { Cell.money($0) }
        }
        return cells
    }
}

/// The amounts of an ``MRRMovementRow`` in the reporting currency at the month's rate, written so that the
/// row's identity holds on them too: `mrrEnd` is the sum of the month's `revenue_monthly` `mrr_end_converted`
/// cells, `mrrStart` the MRR at the start converted the same way at this month's rate (so it differs from the
/// previous row's `mrrEnd` by the change of rate), and the movements add up from one to the other. Each `nil`
/// when the FX file has no rate for the month and currency.
public struct ConvertedMRRMovement: Sendable, Hashable {
    public var mrrStart: Money?
    public var new: Money?
    public var expansion: Money?
    public var contraction: Money?
    public var churned: Money?
    public var reactivation: Money?
    public var mrrEnd: Money?
}

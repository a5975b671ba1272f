/// One row of `subscriptions_monthly.csv`: a month × platform × product, or a total (`all`).
///
/// Invariant: `activeEnd == activeStart + new + reactivated + productChangesIn - productChangesOut - churned`,
/// and `churned` is the sum of the five reasons.
public struct SubscriptionsMonthlyRow: Sendable, Hashable {
    /// `YYYY-MM` in the reporting time zone.
    public var month: String
    /// `apple`, `google` or `all`.
    public var platform: String
    /// The product id, or `all`.
    public var productId: String
    public var activeStart: Int
    public var new: Int
    public var reactivated: Int
    public var productChangesIn: Int
    public var productChangesOut: Int
    public var churnedVoluntary: Int
    public var churnedInvoluntary: Int
    public var churnedRefund: Int
    public var churnedPaused: Int
    public var churnedOther: Int
    public var activeEnd: Int
    /// Spells counted in `activeStart` that end in the month / `activeStart`.
    public var churnRate: Ratio
    /// (`churned` − `reactivated`) / `activeStart`; may be negative.
    public var netChurnRate: Ratio
    public var activeTrialsEnd: Int

    public var churned: Int { churnedVoluntary + churnedInvoluntary + churnedRefund + churnedPaused + churnedOther }

    public static let columns = [
        "month", "platform", "product_id", "active_start", "new", "reactivated", "product_changes_in",
        "product_changes_out", "churned", "churned_voluntary", "churned_involuntary", "churned_refund",
        "churned_paused", "churned_other", "active_end", "churn_rate", "net_churn_rate", "active_trials_end",
    ]

    /// The row's cells in ``columns`` order: the one rendering CSV, JSON and HTML share.
    public var cells: [Cell] {
        [.text(month), .text(platform), .text(productId), .count(activeStart), .count(new), .count(reactivated),
         .count(productChangesIn), .count(productChangesOut), .count(churned), .count(churnedVoluntary),
         .count(churnedInvoluntary), .count(churnedRefund), .count(churnedPaused), .count(churnedOther),
         .count(activeEnd), churnRate.cell, netChurnRate.cell, .count(activeTrialsEnd)]
    }
}

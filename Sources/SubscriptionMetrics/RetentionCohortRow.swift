import Facts

/// One row of `retention_cohorts.csv`: a cohort (month of the first paid period × platform × its duration) at
/// renewal period `period`.
public struct RetentionCohortRow: Sendable, Hashable {
    /// `YYYY-MM` of the first paid period's start, reporting time zone.
    public var cohortMonth: String
    public var platform: Platform
    public var duration: BillingDuration
    public var cohortSize: Int
    /// k = 0, 1, 2, ...
    public var period: Int
    /// Cohort subscriptions with at least k + 1 non-revoked paid periods.
    public var retained: Int
    /// `retained / cohortSize`.
    public var retentionRate: Ratio { Ratio(retained, cohortSize) }
    /// The k-th renewal of every member was due at least 60 days (the longest billing retry) before as-of.
    public var complete: Bool

    public static let columns = [
        "cohort_month", "platform", "duration", "cohort_size", "period", "retained", "retention_rate", "complete",
    ]

    public var cells: [Cell] {
        [.text(cohortMonth), .text(platform.rawValue), .text(duration.description), .count(cohortSize), .count(period),
         .count(retained), retentionRate.cell, .boolean(complete)]
    }
}

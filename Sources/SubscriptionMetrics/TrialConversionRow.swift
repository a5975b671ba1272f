import Facts

/// One row of `trial_conversion.csv`: subscriptions whose first trial started in the month, per platform and
/// the trial's product.
public struct TrialConversionRow: Sendable, Hashable {
    public var cohortMonth: String
    public var platform: Platform
    public var productId: String
    public var trials: Int
    public var converted: Int
    public var abandoned: Int
    /// Neither converted nor abandoned by the as-of time.
    public var pending: Int
    /// `converted / (converted + abandoned)`.
    public var conversionRate: Ratio { Ratio(converted, converted + abandoned) }

    public static let columns = [
        "cohort_month", "platform", "product_id", "trials", "converted", "abandoned", "pending", "conversion_rate",
    ]

    public var cells: [Cell] {
        [.text(cohortMonth), .text(platform.rawValue), .text(productId), .count(trials), .count(converted),
         .count(abandoned), .count(pending), conversionRate.cell]
    }
}

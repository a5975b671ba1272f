/// Every table of `metrics.md`, rows sorted by their key columns (byte order; retention `period` numerically).
public struct ReportTables: Sendable, Equatable {
    public var subscriptionsMonthly: [SubscriptionsMonthlyRow]
    public var revenueMonthly: [RevenueMonthlyRow]
    public var mrrMovements: [MRRMovementRow]
    public var retentionCohorts: [RetentionCohortRow]
    public var trialConversion: [TrialConversionRow]
    public var graceRecovery: [GraceRecoveryRow]
    /// `--currency`: when set, revenue and MRR movement rows carry their `converted` amounts and columns.
    public var reportingCurrency: String?
    /// Google purchase tokens that only notifications name, first notified by the as-of time, per product (the
    /// count in ``ProductCount/transactions``), sorted by platform and product id: no table holds them, since an
    /// RTDN states no expiry and no price (``SubscriptionHistory/notifiedOnlyTokens``).
    public var notifiedOnlyTokens: [ProductCount]
    /// Google voided purchases no period holds, voided by the as-of time, per product (the count in
    /// ``ProductCount/transactions``): refunds no table counts (``SubscriptionHistory/unplacedRefunds``).
    public var unplacedRefunds: [ProductCount]

    public init(subscriptionsMonthly: [SubscriptionsMonthlyRow] = [], revenueMonthly: [RevenueMonthlyRow] = [],
                mrrMovements: [MRRMovementRow] = [], retentionCohorts: [RetentionCohortRow] = [], trialConversion: [TrialConversionRow] = [],
                graceRecovery: [GraceRecoveryRow] = [], reportingCurrency: String? = nil, notifiedOnlyTokens: [ProductCount] = [],
                unplacedRefunds: [ProductCount] = []) {
        self.subscriptionsMonthly = subscriptionsMonthly
        self.revenueMonthly = revenueMonthly
        self.mrrMovements = mrrMovements
        self.retentionCohorts = retentionCohorts
        self.trialConversion = trialConversion
        self.graceRecovery = graceRecovery
        self.reportingCurrency = reportingCurrency
        self.notifiedOnlyTokens = notifiedOnlyTokens
        self.unplacedRefunds = unplacedRefunds
    }

    /// The tables as text, in `cli.md` order: what the CSV, JSON and HTML writers render.
    public var texts: [TableText] {
        [
            TableText(name: "subscriptions_monthly", columns: SubscriptionsMonthlyRow.columns,
                      rows: subscriptionsMonthly.map(\.cells)),
            TableText(name: "revenue_monthly",
                      columns: RevenueMonthlyRow.columns + (reportingCurrency == nil ? [] : RevenueMonthlyRow.convertedColumns),
                      rows: revenueMonthly.map(\.cells)),
            TableText(name: "mrr_movements",
                      columns: MRRMovementRow.columns + (reportingCurrency == nil ? [] : MRRMovementRow.convertedColumns),
                      rows: mrrMovements.map(\.cells)),
            TableText(name: "retention_cohorts", columns: RetentionCohortRow.columns, rows: retentionCohorts.map(\.cells)),
            TableText(name: "trial_conversion", columns: TrialConversionRow.columns, rows: trialConversion.map(\.cells)),
            TableText(name: "grace_recovery", columns: GraceRecoveryRow.columns, rows: graceRecovery.map(\.cells)),
        ]
    }
}

extension ReportTables {
    /// `YYYY-MM CUR` for every month and currency whose revenue or MRR movements could not be converted to the
    /// reporting currency because the FX file has no rate for it (their `*_converted` cells are empty). Sorted,
    /// distinct.
    public var missingExchangeRates: [String] {
        let revenue = revenueMonthly.compactMap { row in
            row.converted.flatMap { $0.gross == nil ? "\(row.month) \(row.currency)" : nil }
        }
        let movements = mrrMovements.compactMap { row in
            row.converted.flatMap { $0.mrrEnd == nil ? "\(row.month) \(row.currency)" : nil }
        }
        return Set(revenue + movements).sorted()
    }
}

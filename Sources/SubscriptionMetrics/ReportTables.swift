/// Every table of `metrics.md`, rows sorted by their key columns (byte order; retention `period` numerically).
public struct ReportTables: Sendable, Equatable {
    public var subscriptionsMonthly: [SubscriptionsMonthlyRow]
    public var revenueMonthly: [RevenueMonthlyRow]
    public var retentionCohorts: [RetentionCohortRow]
    public var trialConversion: [TrialConversionRow]
    public var graceRecovery: [GraceRecoveryRow]
    /// `--currency`: when set, revenue rows carry ``RevenueMonthlyRow/converted`` and the converted columns.
    public var reportingCurrency: String?

    public init(subscriptionsMonthly: [SubscriptionsMonthlyRow] = [], revenueMonthly: [RevenueMonthlyRow] = [],
                retentionCohorts: [RetentionCohortRow] = [], trialConversion: [TrialConversionRow] = [],
                graceRecovery: [GraceRecoveryRow] = [], reportingCurrency: String? = nil) {
        self.subscriptionsMonthly = subscriptionsMonthly
        self.revenueMonthly = revenueMonthly
        self.retentionCohorts = retentionCohorts
        self.trialConversion = trialConversion
        self.graceRecovery = graceRecovery
        self.reportingCurrency = reportingCurrency
    }

    /// The tables as text, in `cli.md` order: what the CSV, JSON and HTML writers render.
    public var texts: [TableText] {
        [
            TableText(name: "subscriptions_monthly", columns: SubscriptionsMonthlyRow.columns,
                      rows: subscriptionsMonthly.map(\.cells)),
            TableText(name: "revenue_monthly",
                      columns: RevenueMonthlyRow.columns + (reportingCurrency == nil ? [] : RevenueMonthlyRow.convertedColumns),
                      rows: revenueMonthly.map(\.cells)),
            TableText(name: "retention_cohorts", columns: RetentionCohortRow.columns, rows: retentionCohorts.map(\.cells)),
            TableText(name: "trial_conversion", columns: TrialConversionRow.columns, rows: trialConversion.map(\.cells)),
            TableText(name: "grace_recovery", columns: GraceRecoveryRow.columns, rows: graceRecovery.map(\.cells)),
        ]
    }
}

extension ReportTables {
    /// `YYYY-MM CUR` for every month and currency whose revenue could not be converted to the reporting
    /// currency because the FX file has no rate for it (their `*_converted` cells are empty). Sorted, distinct.
    public var missingExchangeRates: [String] {
        Set(revenueMonthly.compactMap { row in
            row.converted.flatMap { $0.gross == nil ? "\(row.month) \(row.currency)" : nil }
        }).sorted()
    }
}

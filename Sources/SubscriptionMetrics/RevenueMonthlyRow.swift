import Facts

/// One row of `revenue_monthly.csv`: a month × platform × product × purchase currency, amounts in that currency.
public struct RevenueMonthlyRow: Sendable, Hashable {
    /// `YYYY-MM` in the reporting time zone.
    public var month: String
    public var platform: Platform
    public var productId: String
    /// ISO 4217 purchase currency; empty when unknown (then every transaction of the row is unpriced).
    public var currency: String
    /// Prices of paid periods and one-time purchases charged in the month.
    public var gross: Money
    /// Prices refunded with revocation time in the month (prorated refunds: their share).
    public var refunds: Money
    /// `gross - refunds` as written (``Money/writtenMinus(_:)``): a prorated refund of 5.495 is written 5.50, and
    /// 10.99 less it 5.49, not 5.50.
    public var net: Money { gross.writtenMinus(refunds) }
    /// Paid periods and one-time purchases charged in the month, priced or not.
    public var transactions: Int
    /// Revocations in the month.
    public var refundedTransactions: Int
    /// Of `transactions`, those with no known price or currency: counted, never guessed.
    public var unpricedTransactions: Int
    /// Of `transactions`, periods bought under an introductory or other offer whose payloads state no price, priced
    /// at the product's list price (`--prices`): gross overstates where the offer cost less. Not a CSV column:
    /// the report's warnings say it (``ReportTables/listPricedOffers``).
    public var listPricedOffers: Int = 0
    /// Of `transactions`, periods counted as paid though no payload showed a payment (``Period/isAssumedPaid``:
    /// Google first orders whose resources showed no payment, which may have been unconverted free trials). Not a CSV
    /// column: the report's warnings say it (``ReportTables/assumedPaidPeriods``).
    public var assumedPaidPeriods: Int = 0
    /// Of `unpricedTransactions`, Google proration periods (``Period/isProration``): their charge is not stated,
    /// while MRR counts them at the plan's recurring price. Not a CSV column: the report's warnings say it
    /// (``ReportTables/prorationPeriods``).
    public var prorationPeriods: Int = 0
    /// Monthly recurring revenue of the subscriptions in `paid` state at the end of the month.
    public var mrrEnd: Money
    /// The amounts in the reporting currency, present when `--currency` is given (each `nil` without a rate).
    public var converted: ConvertedRevenue?

    public static let columns = [
        "month", "platform", "product_id", "currency", "gross", "refunds", "net", "transactions",
        "refunded_transactions", "unpriced_transactions", "mrr_end",
    ]

    public static let convertedColumns = ["gross_converted", "refunds_converted", "net_converted", "mrr_end_converted"]

    /// The row's cells in column order (``columns``, then ``convertedColumns`` when converted).
    public var cells: [Cell] {
        var cells: [Cell] = [.text(month), .text(platform.rawValue), .text(productId), .text(currency), .money(gross),
                             .money(refunds), .money(net), .count(transactions), .count(refundedTransactions),
                             .count(unpricedTransactions), .money(mrrEnd)]
        if let converted {
            cells += [.money(converted.gross), .money(converted.refunds), .money(converted.net), .money(converted.mrrEnd)]
        }
        return cells
    }
}

/// Revenue amounts in the reporting currency: amount × the month's rate of the purchase currency, rounded to
/// cents. `nil` when the FX file has no rate for that month and currency (the reporting currency itself is 1).
public struct ConvertedRevenue: Sendable, Hashable {
    public var gross: Money?
    public var refunds: Money?
    public var net: Money?
    public var mrrEnd: Money?
}

import Facts

/// A product and how many of its transactions up to the as-of time a report warns about (summed over months and
/// currencies of `revenue_monthly`, but for the last):
/// - ``ReportTables/unpricedProducts``: transactions with no known price (or no currency), counted in
///   `unpriced_transactions` and left out of gross, refunds, net and MRR, so those understate until a price list
///   (`--prices`) supplies them;
/// - ``ReportTables/listPricedOfferProducts``: periods of an introductory or other offer whose payloads state no
///   price (Apple receipts and V1 notifications, signed transactions before late 2023, Google v2 introductory
///   phases), priced at the product's list price, so gross and MRR overstate where the offer cost less;
/// - ``ReportTables/assumedPaidPeriodProducts``: periods counted as paid though no payload showed a payment
///   (Google first orders seen only once expired, or only in v2 resources before January 2026), which overstate
///   wherever one was an unconverted free trial;
/// - ``ReportTables/prorationPeriodProducts``: of the unpriced transactions, Google proration periods, whose charge
///   no payload states (nothing, a prorated difference or the full price): no price list prices them, and MRR
///   counts them at the plan's recurring price;
/// - ``ReportTables/notifiedOnlyTokens``: Google purchase tokens only notifications name, which give no period
///   (there `transactions` counts tokens);
/// - ``ReportTables/unplacedRefunds``: Google voided purchases of orders no period or purchase holds, refunds left out of
///   `refunds` (there `transactions` counts voids).
///
/// The report says each on stderr, in `summary.json` `warnings` and in report.html.
public struct ProductCount: Sendable, Hashable {
    public var platform: Platform
    public var productId: String
    public var transactions: Int

    public init(platform: Platform, productId: String, transactions: Int) {
        self.platform = platform
        self.productId = productId
        self.transactions = transactions
    }

    /// The product id as a sentence names it: `(no product named)` when the records name none (a Google token
    /// only voided purchases name).
    public var productName: String { productId.isEmpty ? "(no product named)" : productId }
}

extension ReportTables {
    /// The products with unpriced transactions, from `revenue_monthly`'s rows (so the same numbers as the CSV),
    /// sorted by platform and product id (byte order); products with none are left out.
    public var unpricedProducts: [ProductCount] { products(counting: \.unpricedTransactions) }

    /// `unpriced_transactions` over every row.
    public var unpricedTransactions: Int { revenueMonthly.reduce(0) { $0 + $1.unpricedTransactions } }

    /// Of ``unpricedTransactions``, those whose currency is unknown (rows with an empty `currency`) and that a
    /// price is all they lack (not ``prorationPeriods``): no price list row can price them, only a `currency` in
    /// their records' envelopes.
    public var unpricedWithoutCurrency: Int {
        revenueMonthly.reduce(0) { $0 + ($1.currency.isEmpty ? $1.unpricedTransactions - $1.prorationPeriods : 0) }
    }

    /// The products with offers priced from the list (``RevenueMonthlyRow/listPricedOffers``), sorted as
    /// ``unpricedProducts``.
    public var listPricedOfferProducts: [ProductCount] { products(counting: \.listPricedOffers) }

    /// ``RevenueMonthlyRow/listPricedOffers`` over every row.
    public var listPricedOffers: Int { revenueMonthly.reduce(0) { $0 + $1.listPricedOffers } }

    /// The products with periods counted as paid though no payload showed a payment
    /// (``RevenueMonthlyRow/assumedPaidPeriods``), sorted as ``unpricedProducts``.
    public var assumedPaidPeriodProducts: [ProductCount] { products(counting: \.assumedPaidPeriods) }

    /// ``RevenueMonthlyRow/assumedPaidPeriods`` over every row.
    public var assumedPaidPeriods: Int { revenueMonthly.reduce(0) { $0 + $1.assumedPaidPeriods } }

    /// The products with proration periods (``RevenueMonthlyRow/prorationPeriods``), sorted as ``unpricedProducts``.
    public var prorationPeriodProducts: [ProductCount] { products(counting: \.prorationPeriods) }

    /// ``RevenueMonthlyRow/prorationPeriods`` over every row: the part of ``unpricedTransactions`` that no price
    /// list can price.
    public var prorationPeriods: Int { revenueMonthly.reduce(0) { $0 + $1.prorationPeriods } }

    private func products(counting count: KeyPath<RevenueMonthlyRow, Int>) -> [ProductCount] {
        var counts: [Platform: [String: Int]] = [:]
        for row in revenueMonthly where row[keyPath: count] > 0 {
            counts[row.platform, default: [:]][row.productId, default: 0] += row[keyPath: count]
        }
        return ProductCount.list(counts)
    }
}

extension ProductCount {
    /// `counts` (by platform, then product id) as a list sorted by platform and product id (byte order), the order
    /// every warning lists products in.
    static func list(_ counts: [Platform: [String: Int]]) -> [ProductCount] {
        counts.keys.sorted().flatMap { platform in
            (counts[platform] ?? [:]).sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map {
                ProductCount(platform: platform, productId: $0.key, transactions: $0.value)
            }
        }
    }
}

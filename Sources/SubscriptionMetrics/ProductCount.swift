import Facts

/// A product whose transactions had no known price (or no currency) up to the as-of time: counted in
/// `unpriced_transactions`, left out of gross, refunds, net and MRR, so those understate until a price list
/// (`--prices`) supplies them. The report says so on stderr, in `summary.json` `warnings` and in report.html.
public struct UnpricedProduct: Sendable, Hashable {
    public var platform: Platform
    public var productId: String
    /// `unpriced_transactions` of the product, summed over months and currencies.
    public var transactions: Int
}

extension ReportTables {
    /// The products with unpriced transactions, from `revenue_monthly`'s rows (so the same numbers as the CSV),
    /// sorted by platform and product id (byte order); products with none are left out.
    public var unpricedProducts: [UnpricedProduct] {
        var counts: [Platform: [String: Int]] = [:]
        for row in revenueMonthly where row.unpricedTransactions > 0 {
            counts[row.platform, default: [:]][row.productId, default: 0] += row.unpricedTransactions
        }
        return counts.keys.sorted().flatMap { platform in
            (counts[platform] ?? [:]).sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map {
                UnpricedProduct(platform: platform, productId: $0.key, transactions: $0.value)
            }
        }
    }

    /// `unpriced_transactions` over every row.
    public var unpricedTransactions: Int { revenueMonthly.reduce(0) { $0 + $1.unpricedTransactions } }
}

import SubscriptionMetrics

/// The banners at the top of report.html for what makes its figures understate or overstate, so that nobody reads
/// revenue that leaves transactions out, or guesses their price, without being told (the same warnings `report` says on stderr and
/// `summary.json` has under `warnings`):
/// - transactions with no known price: the total and each product's count, as sums of `revenue_monthly`'s
///   `unpriced_transactions` (tagged, so the browser check compares them with the CSV), and what to pass; the
///   products with Google proration periods among them, whose charge no payload states and no price list gives;
/// - periods of an offer priced from the list: the products (their counts are in `summary.json` only, as no CSV
///   column holds them);
/// - periods counted as paid though no payload showed a payment: the products, likewise;
/// - Google purchase tokens only notifications name (no period is built for them): the products, likewise;
/// - Google voided purchases of orders no period or purchase holds (refunds left out): the products, likewise;
/// - with `--currency`, month and currency pairs without an FX rate.
struct HTMLWarnings: Sendable {
    let tables: ReportTables

    func html() -> String {
        var out = ""
        let products = tables.unpricedProducts
        if !products.isEmpty {
            let total = HTMLSource.sum("revenue_monthly", where: [], "unpriced_transactions")
            let priceable = tables.unpricedTransactions > tables.prorationPeriods
            out += "<p class=\"banner\" id=\"warning-unpriced\" role=\"note\"><strong>Revenue"
                + (priceable ? " and MRR understate" : " understates") + ".</strong> "
                + "<span class=\"value\"\(total.attributes)>\(tables.unpricedTransactions)</span> transaction"
                + (tables.unpricedTransactions == 1 ? "" : "s") + " had no known price"
                + " (or currency), so gross, refunds, net" + (priceable ? " and MRR" : "") + " leave "
                + (tables.unpricedTransactions == 1 ? "it" : "them") + " out"
                + (priceable ? ", and MRR movements count a subscription whose current period turns unpriced as churned"
                    + " (and priced again as reactivated)" : "") + ": "
            out += products.map { product in
                let source = HTMLSource.sum("revenue_monthly", where: [("platform", product.platform.rawValue),
                                                                        ("product_id", product.productId)], "unpriced_transactions")
                return HTMLText.escape(product.platform.rawValue + " " + product.productId)
                    + " <span class=\"value\"\(source.attributes)>\(product.transactions)</span>"
            }.joined(separator: ", ") + "."
            let prorations = tables.prorationPeriodProducts
            if !prorations.isEmpty {
                out += " Among them are Google proration periods, time a change of plan credited or an add-on aligned with"
                    + " its base plan ("
                    + HTMLText.escape(prorations.map { $0.platform.rawValue + " " + $0.productId }.joined(separator: ", "))
                    + "), whose charge no payload states (nothing with time proration, a prorated difference or the full"
                    + " price with other replacement modes): no price list prices them, and MRR counts them at the plan's"
                    + " recurring price over the product's duration in <code>--prices</code> (without one, over the term"
                    + " its plan's other orders or the plan it replaced ran, else its own length). <code>summary.json</code>"
                    + " counts them under <code>warnings</code>"
                    + " (<code>proration_periods</code>)."
            }
            if priceable {
                out += " Run the report with <code>--prices FILE</code> (CSV <code>platform,product_id,currency,price,duration</code>)"
                    + " listing these products."
            }
            out += "</p>\n"
        }
        // No CSV column holds the next two counts, and every number on the page is a CSV cell's: the page names the
        // products, and summary.json's `warnings` counts them.
        out += Self.overstatement(id: "warning-list-priced", tables.listPricedOfferProducts, key: "list_priced_offers",
                                  what: "Periods of an introductory or other offer whose payloads state no price count at the "
                                      + "list price of <code>--prices</code>, which has one price per product")
        out += Self.overstatement(id: "warning-assumed-paid", tables.assumedPaidPeriodProducts, key: "assumed_paid_periods",
                                  what: "Some first orders showed no payment (resources fetched once they had expired, when "
                                      + "Google no longer says whether they were free trials, or v2 resources from before "
                                      + "January 2026, which had no offer phase); they count as paid, except those shorter than the "
                                      + "billing period <code>--prices</code> lists for their product or their renewal shows, "
                                      + "which count as free trials")
        let notified = tables.notifiedOnlyTokens
        if !notified.isEmpty {
            out += "<p class=\"banner\" id=\"warning-notification-only\" role=\"note\"><strong>Subscriptions, revenue and MRR"
                + " understate.</strong> Some Google purchase tokens appear only in real-time developer notifications, which"
                + " state neither expiry nor price, so no table holds them: "
                + HTMLText.escape(notified.map { $0.platform.rawValue + " " + $0.productName }.joined(separator: ", "))
                + ". Archive the subscription resource fetched at each notification (a quarantined one counts as"
                + " missing). <code>summary.json</code> counts them"
                + " under <code>warnings</code> (<code>notification_only_tokens</code>).</p>\n"
        }
        let unplaced = tables.unplacedRefunds
        if !unplaced.isEmpty {
            out += "<p class=\"banner\" id=\"warning-unplaced-refunds\" role=\"note\"><strong>Refunds understate.</strong>"
                + " Some Google voided purchases name an order no other record showed, so neither its charge nor its refund"
                + " is counted: " + HTMLText.escape(unplaced.map { $0.platform.rawValue + " " + $0.productName }.joined(separator: ", "))
                + ". Archive the purchase's resource (a subscription's at each notification, a product's)."
                + " <code>summary.json</code> counts them"
                + " under <code>warnings</code> (<code>unplaced_refunds</code>).</p>\n"
        }
        let missing = tables.missingExchangeRates
        if let currency = tables.reportingCurrency, !missing.isEmpty {
            out += "<p class=\"banner\" id=\"warning-fx\" role=\"note\"><strong>Amounts in " + HTMLText.escape(currency)
                + " are incomplete.</strong> No FX rate for " + HTMLText.escape(missing.joined(separator: ", "))
                + ": those months' converted amounts are empty and left out of the totals in " + HTMLText.escape(currency)
                + ". Add their rows to the <code>--fx-rates</code> file.</p>\n"
        }
        return out
    }

    /// A banner saying that revenue and MRR may overstate for `products` (none: no banner): `what` happened (HTML),
    /// the products, and the `summary.json` warning `key` that counts them.
    private static func overstatement(id: String, _ products: [ProductCount], key: String, what: String) -> String {
        guard !products.isEmpty else { return "" }
        return "<p class=\"banner\" id=\"\(id)\" role=\"note\"><strong>Revenue and MRR may overstate.</strong> \(what): "
            + HTMLText.escape(products.map { $0.platform.rawValue + " " + $0.productId }.joined(separator: ", "))
            + ". <code>summary.json</code> counts them under <code>warnings</code> (<code>\(key)</code>).</p>\n"
    }
}

import Facts
import Logging
import Foundation
import SubscriptionMetrics
import Pipeline

extension ReportJob.Outcome {
    /// What `report` and `run` print on stdout: where the files are and the last complete month's headline.
    func summaryText(timeZone: TimeZone, zoneName: String, directory: String) -> String {
        var lines = ["reports written to \(directory)/: " + files.joined(separator: ", ")]
        let asOfText = timeZone.reportTime(asOf)
        guard let headline = tables.headline(asOf: asOf, timeZone: timeZone) else {
            lines.append("as of \(asOfText) (\(zoneName)): no complete month yet")
            return lines.joined(separator: "\n")
        }
        let total = headline.subscriptions
        let platforms = headline.byPlatform.map { "\($0.platform) \($0.activeEnd)" }.joined(separator: ", ")
        lines.append("as of \(asOfText) (\(zoneName)); last complete month \(headline.month):")
        lines.append("  active subscriptions at month end: \(total.activeEnd) (\(platforms))")
        // Each rate with the numbers it is made of (metrics.md): the churn rate counts spells active at the start
        // that ended, `churned` every spell that ended (also those that started in the month).
        let churn = total.churnRate
        lines.append("  churn rate \(rate(churn)): \(churn.numerator) of the \(churn.denominator) active at the start ended; "
                     + "\(total.churned) paid spells ended in all (\(total.churned - churn.numerator) of them started in the month); "
                     + "net churn rate \(rate(total.netChurnRate)) = (\(total.churned) churned - \(total.reactivated) reactivated) / \(total.activeStart)")
        // Open episodes are not in the rate yet: it is provisional while any is open.
        let grace = headline.grace.map {
            "\($0.platform) \(rate($0.recoveryRate)) (\($0.recoveryRate.numerator) recovered of \($0.recoveryRate.denominator) ended"
                + ($0.open > 0 ? "; \($0.open) still open: provisional)" : ")")
        }
        lines.append("  billing-issue recovery rate, episodes started this month: " + (grace.isEmpty ? "none" : grace.joined(separator: ", ")))
        let trials = headline.trials.map {
            "\($0.platform) \($0.productId) \(rate($0.conversionRate)) (\($0.conversionRate.numerator) of \($0.conversionRate.denominator))"
        }
        lines.append("  trial conversion, trials started this month: " + (trials.isEmpty ? "none" : trials.joined(separator: ", ")))
        if !headline.mrrByCurrency.isEmpty {
            lines.append("  MRR: " + headline.mrrByCurrency.map { "\($0.amount.text) \($0.currency)" }.joined(separator: ", "))
        }
        return lines.joined(separator: "\n")
    }

    /// Says, as warnings on stderr, what makes the reports understate or overstate and how to fix it: transactions
    /// with no price (cli.md), offers priced from the list, periods assumed paid, Google tokens only notifications
    /// name, months without an FX rate, statements dated after the run's clock.
    func warnAboutGaps(logger: Logger, pricesGiven: Bool) {
        if let futureStatementAt {
            logger.warning("""
                the ledger holds statements dated after now (the latest at \(Timestamp.rfc3339(futureStatementAt))); \
                the reports are as of now (\(Timestamp.rfc3339(asOf))): give --as-of to choose another time
                """, metadata: ["future_statement_at": "\(Timestamp.rfc3339(futureStatementAt))"])
        }
        let unpriced = tables.unpricedProducts
        if !unpriced.isEmpty {
            // A transaction of unknown currency no price list row can price: only its envelope's `currency` can.
            // Nor can any row price a proration period, whose charge, not its price, is unknown; but without the
            // list its MRR's billing duration is only inferred (from its plan's other orders or the plan it replaced).
            let withoutCurrency = tables.unpricedWithoutCurrency
            let prorations = tables.prorationPeriods, priceable = tables.unpricedTransactions - prorations
            var fixes: [String] = []
            if (priceable > 0 && (withoutCurrency < priceable || !pricesGiven)) || (prorations > 0 && !pricesGiven) {
                fixes.append(pricesGiven
                    ? "add rows for these products to the --prices file"
                    : "pass --prices FILE, a CSV of platform,product_id,currency,price,duration with a row for each of these products")
            }
            if withoutCurrency > 0 {
                fixes.append((withoutCurrency == priceable
                               ? "none of them had a currency" : "\(withoutCurrency) of them had no currency")
                    + " in their payloads or envelopes, and a price list row is for one currency: log `currency` in the"
                    + " envelopes of such records (a Google prepaid plan states none, nor does a receipt)")
            }
            var message = "\(tables.unpricedTransactions) transaction\(tables.unpricedTransactions == 1 ? "" : "s") had no "
                + "known price (\(unpriced.counted)): "
                + (priceable > 0 ? "revenue and MRR leave them out and understate, and MRR movements count a subscription"
                    + " whose current period turns unpriced as churned (and priced again as reactivated)"
                    : "revenue leaves them out")
            var metadata: Logger.Metadata = ["unpriced_transactions": "\(tables.unpricedTransactions)",
                                             "unpriced_products": "\(unpriced.names)"]
            if prorations > 0 {
                let products = tables.prorationPeriodProducts
                message += "; \(prorations) of them \(prorations == 1 ? "is a" : "are") Google proration period\(prorations == 1 ? "" : "s")"
                    + " (time a change of plan credited, or an add-on aligned with its base plan: \(products.counted)),"
                    + " whose charge no payload states (nothing with time proration, a prorated difference or the full"
                    + " price with other replacement modes): revenue understates only where one was charged, no price"
                    + " list prices them, and MRR counts them at the plan's recurring price over the product's duration"
                    + " in --prices (without one, over the term its plan's other orders or the plan it replaced ran, else"
                    + " its own length)"
                metadata["proration_periods"] = "\(prorations)"
                metadata["proration_period_products"] = "\(products.names)"
            }
            logger.warning("\(message)\(fixes.isEmpty ? "" : "; " + fixes.joined(separator: "; "))", metadata: metadata)
        }
        let listPriced = tables.listPricedOfferProducts
        if !listPriced.isEmpty {
            logger.warning("""
                \(tables.listPricedOffers) period\(tables.listPricedOffers == 1 ? "" : "s") of an introductory or other offer \
                had no price in their payloads \
                (\(listPriced.counted)): they count at the list price of --prices, so revenue and MRR \
                overstate where the offer cost less (the price list has one price per product)
                """, metadata: ["list_priced_offers": "\(tables.listPricedOffers)",
                                "list_priced_offer_products": "\(listPriced.names)"])
        }
        let assumed = tables.assumedPaidPeriodProducts
        if !assumed.isEmpty {
            let count = tables.assumedPaidPeriods
            logger.warning("""
                \(count) first order\(count == 1 ? "" : "s") showed no payment (\(assumed.counted)) and \
                \(count == 1 ? "is" : "are") counted as paid, as metrics.md counts every period not shown as a trial; \
                a resource fetched only once its order had expired (Google then drops v1's paymentState and v2's \
                offerPhase) or a v2 one fetched before Google added offerPhase (January 2026) cannot tell a free trial \
                from a charge, so revenue, new subscriptions and MRR overstate where one was a free trial (one shorter \
                than the billing period its renewal shows already counts as one): give --prices with each product's \
                duration, and archive the resource fetched at each notification
                """, metadata: ["assumed_paid_periods": "\(count)",
                                "assumed_paid_period_products": "\(assumed.names)"])
        }
        let notified = tables.notifiedOnlyTokens
        if !notified.isEmpty {
            let count = notified.reduce(0) { $0 + $1.transactions }
            logger.warning("""
                \(count) Google purchase token\(count == 1 ? "" : "s") appear\(count == 1 ? "s" : "") only in real-time \
                developer notifications (\(notified.counted)): an RTDN states neither expiry nor price, so no period is \
                built for \(count == 1 ? "it" : "them") and every table leaves \(count == 1 ? "it" : "them") out \
                (subscriptions, revenue and MRR understate, and a linked plan change may read as a churn): archive the \
                purchases.subscriptionsv2.get resource fetched at each notification, or release a quarantined one \
                (`subledger quarantine` lists them)
                """, metadata: ["notification_only_tokens": "\(count)",
                                "notification_only_token_products": "\(notified.names)"])
        }
        let unplaced = tables.unplacedRefunds
        if !unplaced.isEmpty {
            let count = unplaced.reduce(0) { $0 + $1.transactions }
            logger.warning("""
                \(count) Google voided purchase\(count == 1 ? "" : "s") name\(count == 1 ? "s" : "") an order no other \
                record showed and none could be filled in (\(unplaced.counted)): \(count == 1 ? "its" : "their") refund\
                \(count == 1 ? " is" : "s are") left out, so refunds understate and the charge\(count == 1 ? "" : "s") \
                refunded \(count == 1 ? "is" : "are") missing from gross: archive the purchase's resource (a subscription's \
                purchases.subscriptionsv2.get at each notification, a product's purchases.products.get), or release a \
                quarantined one (`subledger quarantine` lists them)
                """, metadata: ["unplaced_refunds": "\(count)", "unplaced_refund_products": "\(unplaced.names)"])
        }
        let missing = tables.missingExchangeRates
        guard !missing.isEmpty else { return }
        let shown = missing.prefix(12).joined(separator: ", ") + (missing.count > 12 ? ", ..." : "")
        logger.warning("""
            no FX rate for \(missing.count) month and currency pair(s) (\(shown)); their *_converted cells are \
            empty: add rows `month,currency,rate_to_reporting_currency` for them to the --fx-rates file
            """, metadata: ["missing_fx_rates": "\(missing.count)"])
    }

    private func rate(_ ratio: Ratio) -> String {
        ratio.cell.text.isEmpty ? "n/a" : ratio.cell.text
    }
}

private extension [ProductCount] {
    /// `apple premium_monthly 3, google premium 1`: each product and its count, for a warning's text.
    var counted: String { map { "\($0.platform.rawValue) \($0.productName) \($0.transactions)" }.joined(separator: ", ") }

    /// `apple/premium_monthly,google/premium`: the products, for a warning's metadata.
    var names: String { map { "\($0.platform.rawValue)/\($0.productId)" }.joined(separator: ",") }
}

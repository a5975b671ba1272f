import Facts
import Foundation
import SubscriptionMetrics

/// `summary.json` (`cli.md`): the as-of time, time zone, producer, ingest statistics, the report's warnings, and every table's rows as
/// objects whose keys are the CSV column names in column order and whose values are the CSV cells' text
/// (numbers as JSON numbers, undefined as `null`). One row per line, so diffs stay readable; the same input
/// always gives the same bytes.
public enum SummaryJSON {
    /// - Parameters:
    ///   - asOf: the as-of time (ms, UTC), written RFC 3339 in `timeZone` with its offset and milliseconds.
    ///   - timeZone: the reporting time zone, written as its IANA identifier.
    ///   - generatedBy: the producer, e.g. `subledger 1.0`: the only text that may differ between two runs.
    public static func render(_ tables: ReportTables, ingest: IngestStatistics, asOf: Millis, timeZone: TimeZone,
                              generatedBy: String) -> String {
        var out = "{\n"
        out += "  \"as_of\": " + JSONText.string(timeZone.reportTime(asOf)) + ",\n"
        out += "  \"timezone\": " + JSONText.string(timeZone.reportName) + ",\n"
        out += "  \"generated_by\": " + JSONText.string(generatedBy) + ",\n"
        out += "  \"ingest\": " + ingestObject(ingest) + ",\n"
        out += "  \"warnings\": " + warningsObject(tables)
        for table in tables.texts {
            out += ",\n  " + JSONText.string(table.name) + ": ["
            for (index, row) in table.rows.enumerated() {
                out += (index == 0 ? "\n    " : ",\n    ") + rowObject(columns: table.columns, cells: row)
            }
            out += table.rows.isEmpty ? "]" : "\n  ]"
        }
        return out + "\n}\n"
    }

    /// The ingest statistics object of `cli.md`, the one `ingest --json`, `status --json` and `summary.json`
    /// all print: files, records, reasons (keys sorted), damaged files (sorted by file, offset), skipped files
    /// (sorted by file), the range of event times and the warnings (every `IngestWarning`, zeros included, keys
    /// sorted). `extra` members (already JSON text) are appended in order, e.g. `ingest`'s `unchanged_files`.
    public static func ingestObject(_ ingest: IngestStatistics, extra: [(key: String, json: String)] = []) -> String {
        let records = JSONText.object([
            ("read", String(ingest.read)), ("used", String(ingest.used)), ("duplicate", String(ingest.duplicate)),
            ("excluded", String(ingest.excluded)), ("quarantined", String(ingest.quarantined)),
        ])
        let damaged = ingest.damagedFiles
            .sorted { ($0.file.utf8.lexicographicallyPrecedes($1.file.utf8)) || ($0.file == $1.file && $0.offset < $1.offset) }
            .map { JSONText.object([("file", JSONText.string($0.file)), ("offset", String($0.offset)), ("reason", JSONText.string($0.reason))]) }
        let skipped = ingest.skippedFiles
            .sorted { $0.file.utf8.lexicographicallyPrecedes($1.file.utf8) }
            .map { JSONText.object([("file", JSONText.string($0.file)), ("reason", JSONText.string($0.reason))]) }
        func instant(_ millis: Millis?) -> String { millis.map { JSONText.string(Timestamp.rfc3339($0)) } ?? "null" }
        var members: [(key: String, value: String)] = [
            ("files", String(ingest.files)),
            ("records", records),
            ("excluded_by_reason", JSONText.counts(ingest.excludedByReason)),
            ("quarantined_by_reason", JSONText.counts(ingest.quarantinedByReason)),
            ("damaged_files", "[" + damaged.joined(separator: ",") + "]"),
            ("skipped_files", "[" + skipped.joined(separator: ",") + "]"),
            ("first_event_at", instant(ingest.firstEventAt)),
            ("last_event_at", instant(ingest.lastEventAt)),
            ("warnings", JSONText.counts(ingest.withEveryWarning().warnings)),
        ]
        members += extra.map { (key: $0.key, value: $0.json) }
        return JSONText.object(members)
    }

    /// What makes the figures understate or incomplete, as counts a nightly job can alert on (cli.md: "when
    /// transactions had no price"): `unpriced_transactions` (revenue and MRR leave them out) with the products
    /// they belong to, `list_priced_offers` (offers without a stated price, counted at the list price: revenue and MRR
    /// overstate where the offer cost less) with theirs, `assumed_paid_periods` (Google first orders whose resources
    /// showed no payment, counted as paid though one may have been an unconverted free trial) with theirs,
    /// `proration_periods` (of the unpriced transactions, Google proration periods, whose charge no payload states)
    /// with theirs, `notification_only_tokens` (Google purchase tokens only notifications name, which give no period,
    /// so every table leaves them out) with theirs, `unplaced_refunds` (Google voided purchases of orders no period or purchase
    /// holds, left out of `refunds`) with theirs, and with
    /// `--currency` the `missing_fx_rates` (`YYYY-MM CUR`) whose converted cells are empty. Every key is always
    /// there, zero or empty when nothing is missing.
    static func warningsObject(_ tables: ReportTables) -> String {
        func products(_ products: [ProductCount], counting key: String) -> String {
            "[" + products.map {
                JSONText.object([("platform", JSONText.string($0.platform.rawValue)), ("product_id", JSONText.string($0.productId)),
                                 (key, String($0.transactions))])
            }.joined(separator: ",") + "]"
        }
        return JSONText.object([
            ("unpriced_transactions", String(tables.unpricedTransactions)),
            ("unpriced_products", products(tables.unpricedProducts, counting: "unpriced_transactions")),
            ("list_priced_offers", String(tables.listPricedOffers)),
            ("list_priced_offer_products", products(tables.listPricedOfferProducts, counting: "list_priced_offers")),
            ("assumed_paid_periods", String(tables.assumedPaidPeriods)),
            ("assumed_paid_period_products", products(tables.assumedPaidPeriodProducts, counting: "assumed_paid_periods")),
            ("proration_periods", String(tables.prorationPeriods)),
            ("proration_period_products", products(tables.prorationPeriodProducts, counting: "proration_periods")),
            ("notification_only_tokens", String(tables.notifiedOnlyTokens.reduce(0) { $0 + $1.transactions })),
            ("notification_only_token_products", products(tables.notifiedOnlyTokens, counting: "notification_only_tokens")),
            ("unplaced_refunds", String(tables.unplacedRefunds.reduce(0) { $0 + $1.transactions })),
            ("unplaced_refund_products", products(tables.unplacedRefunds, counting: "unplaced_refunds")),
            ("missing_fx_rates", "[" + tables.missingExchangeRates.map(JSONText.string).joined(separator: ",") + "]"),
        ])
    }

    static func rowObject(columns: [String], cells: [Cell]) -> String {
        JSONText.object(zip(columns, cells).map { column, cell in
            let value: String = switch cell {
            case .text(let text): JSONText.string(text)
            case .number(let number): number
            case .boolean(let flag): flag ? "true" : "false"
            case .empty: "null"
            }
            return (column, value)
        })
    }
}

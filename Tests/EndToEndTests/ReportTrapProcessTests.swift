import Foundation
import Simulator
import Testing

/// The report traps of issue 15, through the real binary on a simulated ledger: revenue that silently
/// understates, a headline whose numbers do not make its rate, an as-of that only takes one form and is printed
/// in another zone than its label, and a page made for machines rather than people.
@Suite(.serialized)
struct ReportTrapProcessTests {
    /// A simulated ledger: `subscribers` over `months` from 2024-01, ingested with the simulation's root.
    static func ledger(subscribers: Int = 150, months: Int = 6, seed: UInt64 = 15) throws -> TemporaryDirectory {
        let workspace = try TemporaryDirectory()
        try Simulation(subscribers: subscribers, months: months, seed: seed).write(to: workspace.file("sim"))
        let ingest = try SubledgerProcess.run(["ingest", "--db", "l.sqlite", "--apple-root-ca", "sim/apple-root.der", "sim/archives"],
                                              in: workspace, tag: "ingest")
        #expect(ingest.status == 1, "the simulated noise is quarantined: \(ingest.stderr)")
        return workspace
    }

    static func csv(_ path: String) throws -> [[String: String]] {
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map {
            $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        }
        guard let header = lines.first else { return [] }
        return lines.dropFirst().map { Dictionary(uniqueKeysWithValues: zip(header, $0)) }
    }

    static func json(_ path: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
    }

    /// Item 7: without `--prices`, legacy Apple payloads (verifyReceipt, V1 notifications) and Google products
    /// carry no price: the report says how many transactions of which products, and what to pass, on stderr, in
    /// summary.json `warnings` and as a banner in report.html; with the price list, none of the three.
    @Test func revenueWithoutPricesSaysItUnderstates() throws {
        let workspace = try Self.ledger()
        let bare = try SubledgerProcess.run(["report", "--db", "l.sqlite", "--out", "bare"], in: workspace, tag: "bare")
        #expect(bare.status == 0, "a warning, not a failure: \(bare.stderr)")
        var perProduct: [String: Int] = [:]
        for row in try Self.csv(workspace.file("bare/revenue_monthly.csv")) {
            perProduct[row["platform"]! + " " + row["product_id"]!, default: 0] += Int(row["unpriced_transactions"]!) ?? 0
        }
        perProduct = perProduct.filter { $0.value > 0 }
        let total = perProduct.values.reduce(0, +)
        #expect(total > 0, "the simulation has legacy Apple payloads")
        #expect(bare.stderr.contains("level=warning"), "\(bare.stderr)")
        #expect(bare.stderr.contains("\(total) transaction\(total == 1 ? "" : "s") had no known price"), "\(bare.stderr)")
        for (product, count) in perProduct { #expect(bare.stderr.contains("\(product) \(count)"), "\(product): \(bare.stderr)") }
        #expect(bare.stderr.contains("pass --prices FILE"), "\(bare.stderr)")
        // Unpriced periods count 0 MRR, so a subscription between priced and unpriced ones moves in mrr_movements.
        #expect(bare.stderr.contains("MRR movements count a subscription whose current period turns unpriced as churned"),
                "\(bare.stderr)")
        let warnings = try #require(try Self.json(workspace.file("bare/summary.json"))["warnings"] as? [String: Any])
        #expect(warnings["unpriced_transactions"] as? Int == total)
        let products = (warnings["unpriced_products"] as? [[String: Any]] ?? []).map {
            ("\($0["platform"] ?? "") \($0["product_id"] ?? "")", $0["unpriced_transactions"] as? Int ?? -1)
        }
        #expect(Dictionary(uniqueKeysWithValues: products) == perProduct)
        let page = try String(contentsOfFile: workspace.file("bare/report.html"), encoding: .utf8)
        #expect(page.contains("id=\"warning-unpriced\""))
        #expect(page.contains("<strong>Revenue and MRR understate.</strong>"))
        #expect(page.contains("MRR movements count a subscription whose current period turns unpriced as churned"))

        let priced = try SubledgerProcess.run(["report", "--db", "l.sqlite", "--out", "priced", "--prices", "sim/prices.csv"],
                                              in: workspace, tag: "priced")
        #expect(priced.status == 0)
        #expect(!priced.stderr.contains("no known price"), "\(priced.stderr)")
        let pricedWarnings = try #require(try Self.json(workspace.file("priced/summary.json"))["warnings"] as? [String: Any])
        #expect(pricedWarnings["unpriced_transactions"] as? Int == 0)
        // The simulation sells no introductory offer: nothing is priced from the list in their place.
        #expect(pricedWarnings["list_priced_offers"] as? Int == 0 && (pricedWarnings["list_priced_offer_products"] as? [Any])?.isEmpty == true)
        #expect(!priced.stderr.contains("had no price in their payloads"), "\(priced.stderr)")
        #expect(!(try String(contentsOfFile: workspace.file("priced/report.html"), encoding: .utf8)).contains("warning-unpriced"))
    }

    /// A Google prepaid plan states no price and no currency: logged without an envelope `currency`, its charges
    /// are unpriced though the price list has the product, and the warning says the currency is what is missing
    /// (a row in --prices would not help), while one logged with a currency is priced from the list.
    @Test func transactionsWithoutACurrencyAreSaidSo() throws {
        let workspace = try TemporaryDirectory()
        func prepaid(_ token: String, currency: String?) -> String {
            #"{"received_at":"2026-01-10T09:01:00Z","source":"google.subscription.v2","package_name":"com.example.app",\#(currency.map { #""currency":"\#($0)","# } ?? "")"#
                + #""subscription_id":"prepaid_pass","purchase_token":"\#(token)","body":{"kind":"androidpublisher#subscriptionPurchaseV2","#
                + #""regionCode":"US","startTime":"2026-01-10T09:00:00Z","subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","lineItems":[{"#
                + #""productId":"prepaid_pass","expiryTime":"2026-02-10T09:00:00Z","offerPhase":{"basePrice":{}},"prepaidPlan":{},"#
                + #""latestSuccessfulOrderId":"GPA.3401-0000-0000-\#(token.suffix(5))"}]}}"#
        }
        let report = try Self.reportOn([prepaid("tok-00001", currency: nil), prepaid("tok-00002", currency: "USD")],
                                       prices: "google,prepaid_pass,USD,4.99,P1M", asOf: "2026-01-31", in: workspace)
        #expect(report.stderr.contains("1 transaction had no known price (google prepaid_pass 1)"), "\(report.stderr)")
        #expect(report.stderr.contains("none of them had a currency in their payloads or envelopes"), "\(report.stderr)")
        #expect(!report.stderr.contains("add rows for these products"), "\(report.stderr)")
        // Without --prices, the list is needed as well.
        let bare = try SubledgerProcess.run(["report", "--db", "l.sqlite", "--out", "b", "--as-of", "2026-01-31"], in: workspace, tag: "bare")
        #expect(bare.stderr.contains("2 transactions had no known price") && bare.stderr.contains("pass --prices FILE")
                && bare.stderr.contains("1 of them had no currency"), "\(bare.stderr)")
        #expect(try Self.csv(workspace.file("r/revenue_monthly.csv")).map { "\($0["currency"]!) \($0["gross"]!) \($0["unpriced_transactions"]!)" }
                .sorted() == [" 0.00 1", "USD 4.99 0"])
    }

    /// An upgrade with time proration on Google: the new token's first order funds a `prorationPeriod` phase,
    /// whose charge no resource states. It is an unpriced transaction though `--prices` lists the product, the
    /// report says why and asks for no price list, and MRR runs at the new plan's recurring price throughout.
    @Test func prorationPeriodsAreSaidAndKeepTheirMRR() throws {
        let workspace = try TemporaryDirectory()
        func resource(_ token: String, at received: String, product: String, state: String, expiry: String, order: String,
                      units: String, phase: String, extra: String = "") -> String {
            #"{"received_at":"\#(received)","source":"google.subscription.v2","package_name":"com.example.app","#
                + #""subscription_id":"\#(product)","purchase_token":"\#(token)","body":{"kind":"androidpublisher#subscriptionPurchaseV2","#
                + #""regionCode":"US","startTime":"\#(token == "tok-basic" ? "2026-01-05T10:00:00Z" : "2026-01-20T12:00:00Z")","#
                + #""subscriptionState":"\#(state)","latestOrderId":"\#(order)",\#(extra)"lineItems":[{"productId":"\#(product)","#
                + #""expiryTime":"\#(expiry)","autoRenewingPlan":{"autoRenewEnabled":true,"recurringPrice":{"currencyCode":"USD","#
                + #""units":"\#(units)","nanos":990000000}},"offerPhase":{\#(phase)},"latestSuccessfulOrderId":"\#(order)"}]}}"#
        }
        let basic = "GPA.3401-1111-1111-11111", premium = "GPA.3401-2222-2222-22222"
        let records = [
            resource("tok-basic", at: "2026-01-05T10:01:00Z", product: "basic_monthly", state: "SUBSCRIPTION_STATE_ACTIVE",
                     expiry: "2026-02-05T10:00:00Z", order: basic, units: "4", phase: #""basePrice":{}"#),
            resource("tok-basic", at: "2026-01-20T12:01:00Z", product: "basic_monthly", state: "SUBSCRIPTION_STATE_EXPIRED",
                     expiry: "2026-01-20T12:00:00Z", order: basic, units: "4", phase: #""basePrice":{}"#,
                     extra: #""canceledStateContext":{"replacementCancellation":{}},"#),
            resource("tok-premium", at: "2026-01-20T12:01:00Z", product: "premium_monthly", state: "SUBSCRIPTION_STATE_ACTIVE",
                     expiry: "2026-02-25T12:00:00Z", order: premium, units: "9", phase: #""prorationPeriod":{}"#,
                     extra: #""linkedPurchaseToken":"tok-basic","#),
            resource("tok-premium", at: "2026-02-25T12:05:00Z", product: "premium_monthly", state: "SUBSCRIPTION_STATE_ACTIVE",
                     expiry: "2026-03-25T12:00:00Z", order: premium + "..0", units: "9", phase: #""basePrice":{}"#,
                     extra: #""linkedPurchaseToken":"tok-basic","#),
        ]
        let report = try Self.reportOn(records, prices: "google,basic_monthly,USD,4.99,P1M\ngoogle,premium_monthly,USD,9.99,P1M",
                                       asOf: "2026-02-28", in: workspace)
        #expect(report.stderr.contains("1 transaction had no known price (google premium_monthly 1)"), "\(report.stderr)")
        #expect(report.stderr.contains("1 of them is a Google proration period (time a change of plan credited, or an add-on aligned"
                                       + " with its base plan: google premium_monthly 1)"), "\(report.stderr)")
        #expect(!report.stderr.contains("add rows for these products") && !report.stderr.contains("MRR movements count"), "\(report.stderr)")
        try Self.expectOneProductWarned(in: workspace, count: "proration_periods", products: "proration_period_products",
                                        product: "premium_monthly")
        #expect(try Self.csv(workspace.file("r/revenue_monthly.csv")).map {
            [$0["month"]!, $0["product_id"]!, $0["gross"]!, $0["transactions"]!, $0["unpriced_transactions"]!, $0["mrr_end"]!].joined(separator: " ")
        } == ["2026-01 basic_monthly 4.99 1 0 0.00", "2026-01 premium_monthly 0.00 1 1 9.99", "2026-02 premium_monthly 9.99 1 0 9.99"])
        let page = try String(contentsOfFile: workspace.file("r/report.html"), encoding: .utf8)
        #expect(page.contains("<strong>Revenue understates.</strong>") && page.contains("Among them are Google proration periods"))

        // Beside a receipt's unpriced renewal, without --prices: both are unpriced, the list is asked for (the receipt's
        // price, the credit's billing duration), and the proration's MRR runs over the term of the plan it replaced
        // (basic_monthly, sold for a month), not over its own 36 days (9.99 × 30 / 36 = 8.33).
        let receipt = #"{"received_at":"2026-01-20T00:00:00Z","source":"apple.verify_receipt","currency":"USD","body":{"status":0,"#
            + #""environment":"Production","receipt":{"bundle_id":"com.example.app","request_date_ms":"1768867200000","in_app":[]},"#
            + #""latest_receipt_info":[{"quantity":"1","product_id":"pro_monthly","transaction_id":"2000000001","#
            + #""original_transaction_id":"2000000001","purchase_date_ms":"1768003200000","expires_date_ms":"1770681600000","#
            + #""is_trial_period":"false","is_in_intro_offer_period":"false"}]}}"#
        try IngestFixtures.write([receipt], to: workspace.file("receipt.ndjson"))
        #expect(try SubledgerProcess.run(["ingest", "--db", "l.sqlite", "receipt.ndjson"], in: workspace, tag: "receipt").status == 0)
        let bare = try SubledgerProcess.run(["report", "--db", "l.sqlite", "--out", "b", "--as-of", "2026-01-31"], in: workspace, tag: "bare")
        #expect(bare.stderr.contains("2 transactions had no known price (apple pro_monthly 1, google premium_monthly 1)")
                && bare.stderr.contains("revenue and MRR leave them out") && bare.stderr.contains("1 of them is a Google proration period")
                && bare.stderr.contains("pass --prices FILE"), "\(bare.stderr)")
        #expect(try Self.csv(workspace.file("b/revenue_monthly.csv")).first { $0["product_id"] == "premium_monthly" }?["mrr_end"] == "9.99")
    }

    /// A Google token that only RTDNs name (its resource was never archived) is in no table, and the report says
    /// so: on stderr, in summary.json and in report.html, with its product.
    @Test func tokensOnlyNotificationsNameAreSaid() throws {
        let workspace = try TemporaryDirectory()
        func push(_ id: String, type: Int, at millis: Int64) -> String {
            let rtdn = #"{"version":"1.0","packageName":"com.example.app","eventTimeMillis":"\#(millis)","#
                + #""subscriptionNotification":{"version":"1.0","notificationType":\#(type),"purchaseToken":"tok-unfetched","#
                + #""subscriptionId":"premium_monthly"}}"#
            return #"{"message":{"data":"\#(Data(rtdn.utf8).base64EncodedString())","messageId":"\#(id)","#
                + #""publishTime":"2026-01-05T10:00:01Z"},"subscription":"projects/p/subscriptions/play"}"#
        }
        try IngestFixtures.write([push("7001", type: 4, at: 1_767_607_200_000), push("7002", type: 2, at: 1_770_285_600_000)],
                                 to: workspace.file("rtdn.ndjson"))
        let report = try Self.ingestThenReport("rtdn.ndjson", in: workspace, ["--as-of", "2026-02-28"])
        #expect(report.stderr.contains("1 Google purchase token appears only in real-time developer notifications (google premium_monthly 1)"),
                "\(report.stderr)")
        try Self.expectOneProductWarned(in: workspace, count: "notification_only_tokens", products: "notification_only_token_products",
                                        product: "premium_monthly")
        let page = try String(contentsOfFile: workspace.file("r/report.html"), encoding: .utf8)
        #expect(page.contains("id=\"warning-notification-only\"") && page.contains("google premium_monthly"))
        // As of a time before its first notification, nothing is said.
        let earlier = try SubledgerProcess.run(["report", "--db", "l.sqlite", "--out", "r0", "--as-of", "2025-12-31"],
                                               in: workspace, tag: "report-earlier")
        #expect(earlier.status == 0 && !earlier.stderr.contains("real-time developer notifications"), "\(earlier.stderr)")
    }

    /// A void of an order no record showed after a free trial (a renewal's length is unknown after one, so it is not
    /// filled in): neither its charge nor its refund is in a table, and the report says so (stderr, summary.json,
    /// report.html).
    @Test func voidsOfOrdersNoRecordShowedAreSaid() throws {
        let workspace = try TemporaryDirectory()
        let trial = IngestFixtures.subscription(5).replacingOccurrences(of: #""paymentState":1"#, with: #""paymentState":2"#)
        let void = #"{"received_at":1712000000000,"source":"google.voided_purchase","package_name":"com.example.app","#
            + #""body":{"kind":"androidpublisher#voidedPurchase","purchaseToken":"tok-5","purchaseTimeMillis":"1711000000000","#
            + #""voidedTimeMillis":"1711900000000","orderId":"GPA.3372-1005-5..1","voidedSource":0,"voidedReason":1}}"#
        try IngestFixtures.write([trial, void], to: workspace.file("play.ndjson"))
        let report = try Self.ingestThenReport("play.ndjson", in: workspace, ["--as-of", "2024-04-30"])
        #expect(report.stderr.contains("1 Google voided purchase names an order no other record showed and none could be filled in (google premium_monthly 1)"),
                "\(report.stderr)")
        try Self.expectOneProductWarned(in: workspace, count: "unplaced_refunds", products: "unplaced_refund_products",
                                        product: "premium_monthly")
        let page = try String(contentsOfFile: workspace.file("r/report.html"), encoding: .utf8)
        #expect(page.contains("id=\"warning-unplaced-refunds\""))
    }

    /// A receipt's introductory period states no price: with `--prices` it counts at the list price, which
    /// overstates where the offer cost less, and the report says so (stderr, summary.json, report.html), per
    /// product; the renewal at the full price is not counted.
    @Test func offersPricedFromTheListAreSaid() throws {
        let workspace = try TemporaryDirectory()
        let receipt = #"""
            {"received_at":"2024-03-01T00:00:00Z","source":"apple.verify_receipt","currency":"USD","body":{"status":0,            "environment":"Production","receipt":{"bundle_id":"com.example.app","request_date_ms":"1709251200000","in_app":[]},            "latest_receipt_info":[{"quantity":"1","product_id":"premium_monthly","transaction_id":"2000000001",            "original_transaction_id":"2000000001","purchase_date_ms":"1704067200000","expires_date_ms":"1706745600000",            "is_trial_period":"false","is_in_intro_offer_period":"true"},{"quantity":"1","product_id":"premium_monthly",            "transaction_id":"2000000002","original_transaction_id":"2000000001","purchase_date_ms":"1706745600000",            "expires_date_ms":"1709251200000","is_trial_period":"false","is_in_intro_offer_period":"false"}]}}
            """#
        try IngestFixtures.write([receipt], to: workspace.file("r.ndjson"))
        try "platform,product_id,currency,price,duration\napple,premium_monthly,USD,9.99,P1M\n"
            .write(toFile: workspace.file("prices.csv"), atomically: true, encoding: .utf8)
        let report = try Self.ingestThenReport("r.ndjson", in: workspace, ["--prices", "prices.csv"])
        #expect(report.stderr.contains("1 period of an introductory or other offer had no price in their payloads (apple premium_monthly 1)"),
                "\(report.stderr)")
        try Self.expectOneProductWarned(in: workspace, count: "list_priced_offers", products: "list_priced_offer_products",
                                        product: "premium_monthly")
        let revenue = try Self.csv(workspace.file("r/revenue_monthly.csv"))
        #expect(revenue.map { $0["gross"] ?? "" } == ["9.99", "9.99"], "both at the list price: \(revenue)")
        #expect(try String(contentsOfFile: workspace.file("r/report.html"), encoding: .utf8).contains("id=\"warning-list-priced\""))
    }

    /// Ingests `records` (NDJSON lines) into `l.sqlite` of `workspace`, which must succeed, then reports as of `asOf`
    /// into `r` with a price list of `prices` (CSV rows): a warning, not a failure.
    static func reportOn(_ records: [String], prices: String, asOf: String, in workspace: TemporaryDirectory,
                         sourceLocation: SourceLocation = #_sourceLocation) throws -> SubledgerProcess.Result {
        try IngestFixtures.write(records, to: workspace.file("records.ndjson"))
        try "platform,product_id,currency,price,duration\n\(prices)\n".write(toFile: workspace.file("prices.csv"), atomically: true,
                                                                              encoding: .utf8)
        let ingest = try SubledgerProcess.run(["ingest", "--db", "l.sqlite", "records.ndjson"], in: workspace, tag: "ingest")
        #expect(ingest.status == 0, "\(ingest.stderr)", sourceLocation: sourceLocation)
        let report = try SubledgerProcess.run(["report", "--db", "l.sqlite", "--out", "r", "--prices", "prices.csv", "--as-of", asOf],
                                              in: workspace, tag: "report")
        #expect(report.status == 0, "a warning, not a failure: \(report.stderr)", sourceLocation: sourceLocation)
        return report
    }

    /// `r/summary.json` warns of one period of one product: `count` is 1, and `products` lists `product` with 1.
    /// Ingests `file` (in `workspace`) into `l.sqlite`, then reports into `r` with `arguments`, expecting both to exit
    /// 0 (a warning is no failure); the report's run, for its stderr.
    static func ingestThenReport(_ file: String, in workspace: TemporaryDirectory, _ arguments: [String],
                                 sourceLocation: SourceLocation = #_sourceLocation) throws -> SubledgerProcess.Result {
        let ingest = try SubledgerProcess.run(["ingest", "--db", "l.sqlite", file], in: workspace, tag: "ingest")
        #expect(ingest.status == 0, "\(ingest.stderr)", sourceLocation: sourceLocation)
        let report = try SubledgerProcess.run(["report", "--db", "l.sqlite", "--out", "r"] + arguments, in: workspace, tag: "report")
        #expect(report.status == 0, "a warning, not a failure: \(report.stderr)", sourceLocation: sourceLocation)
        return report
    }

    static func expectOneProductWarned(in workspace: TemporaryDirectory, count: String, products: String, product: String,
                                       sourceLocation: SourceLocation = #_sourceLocation) throws {
        let warnings = try #require(try json(workspace.file("r/summary.json"))["warnings"] as? [String: Any],
                                    sourceLocation: sourceLocation)
        #expect(warnings[count] as? Int == 1, sourceLocation: sourceLocation)
        let listed = try #require(warnings[products] as? [[String: Any]], sourceLocation: sourceLocation)
        #expect(listed.count == 1 && listed.first?["product_id"] as? String == product && listed.first?[count] as? Int == 1,
                sourceLocation: sourceLocation)
    }

    /// A Google subscription resource fetched after its first order expired (Google drops `paymentState` then):
    /// the order is a paid period, as the same resource fetched before the expiry gives, and the report says it
    /// assumed the payment (an unconverted trial looks the same), on stderr, in summary.json and in report.html.
    @Test func firstOrdersSeenOnlyOnceExpiredAreSaidToBeAssumedPaid() throws {
        let workspace = try TemporaryDirectory()
        let resource = #"""
            {"source":"google.subscription.v1","package_name":"com.example","subscription_id":"premium","purchase_token":"tok1",\#
            "received_at":"2024-03-10T00:00:00Z","body":{"kind":"androidpublisher#subscriptionPurchase",\#
            "startTimeMillis":"1707348607902","expiryTimeMillis":"1709854187177","autoRenewing":false,\#
            "priceCurrencyCode":"USD","priceAmountMicros":"5990000","countryCode":"US","orderId":"GPA.3341-2551-4829-22419",\#
            "acknowledgementState":1,"cancelReason":0,"userCancellationTimeMillis":"1708000000000"}}
            """#
        try IngestFixtures.write([resource], to: workspace.file("g.ndjson"))
        let report = try Self.ingestThenReport("g.ndjson", in: workspace, ["--as-of", "2024-03-31T00:00:00Z"])
        #expect(report.stderr.contains("1 first order showed no payment (google premium 1) and is counted as paid"),
                "\(report.stderr)")
        let revenue = try Self.csv(workspace.file("r/revenue_monthly.csv"))
        #expect(revenue.map { "\($0["month"] ?? "") \($0["gross"] ?? "")" } == ["2024-02 5.99"], "\(revenue)")
        try Self.expectOneProductWarned(in: workspace, count: "assumed_paid_periods", products: "assumed_paid_period_products",
                                        product: "premium")
        #expect(try String(contentsOfFile: workspace.file("r/report.html"), encoding: .utf8).contains("id=\"warning-assumed-paid\""))
    }

    /// v2 resources fetched before January 2026 have no `offerPhase`: a 7-day first order then its renewal `..0`
    /// a month long was a free trial that converted, which the renewal's length shows without a price list, and
    /// the product's duration (P1M) with one: one trial, one charge of 4.99, nothing assumed. A first order that
    /// nothing renewed yet is counted as paid and said to be assumed.
    @Test func aV2TrialFromBeforeOfferPhasesIsFoundByItsLength() throws {
        let workspace = try TemporaryDirectory()
        func resource(_ received: String, expiry: String, order: String) -> String {
            #"{"received_at":"\#(received)","source":"google.subscription.v2","package_name":"com.example.app","purchase_token":"tok-g8","#
                + #""subscription_id":"premium_monthly","body":{"kind":"androidpublisher#subscriptionPurchaseV2","regionCode":"US","#
                + #""startTime":"2024-06-10T10:00:00Z","subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","latestOrderId":"\#(order)","#
                + #""lineItems":[{"productId":"premium_monthly","expiryTime":"\#(expiry)","offerDetails":{"basePlanId":"monthly","#
                + #""offerId":"freetrial-7d","offerTags":["trial"]},"latestSuccessfulOrderId":"\#(order)","autoRenewingPlan":{"#
                + #""autoRenewEnabled":true,"recurringPrice":{"currencyCode":"USD","units":"4","nanos":990000000}}}]}}"#
        }
        try IngestFixtures.write([resource("2024-06-10T10:00:06Z", expiry: "2024-06-17T10:00:00Z", order: "GPA.3401-1111-2222-33333"),
                                  resource("2024-06-17T10:00:06Z", expiry: "2024-07-17T10:00:00Z", order: "GPA.3401-1111-2222-33333..0")],
                                 to: workspace.file("g8.ndjson"))
        #expect(try SubledgerProcess.run(["ingest", "--db", "l.sqlite", "g8.ndjson"], in: workspace, tag: "ingest").status == 0)
        let bare = try SubledgerProcess.run(["report", "--db", "l.sqlite", "--out", "b", "--as-of", "2024-06-30"], in: workspace, tag: "bare")
        #expect(bare.status == 0 && !bare.stderr.contains("showed no payment"), "\(bare.stderr)")
        #expect(try Self.csv(workspace.file("b/revenue_monthly.csv")).map { "\($0["gross"]!) \($0["transactions"]!)" } == ["4.99 1"])
        let early = try SubledgerProcess.run(["report", "--db", "l.sqlite", "--out", "e", "--as-of", "2024-06-15"], in: workspace, tag: "early")
        #expect(early.stderr.contains("1 first order showed no payment (google premium_monthly 1) and is counted as paid"), "\(early.stderr)")
        try "platform,product_id,currency,price,duration\ngoogle,premium_monthly,USD,4.99,P1M\n"
            .write(toFile: workspace.file("prices.csv"), atomically: true, encoding: .utf8)
        let report = try SubledgerProcess.run(["report", "--db", "l.sqlite", "--out", "r", "--as-of", "2024-06-30", "--prices", "prices.csv"],
                                              in: workspace, tag: "report")
        #expect(report.status == 0 && !report.stderr.contains("showed no payment"), "\(report.stderr)")
        #expect(try Self.csv(workspace.file("r/revenue_monthly.csv")).map { "\($0["month"]!) \($0["gross"]!) \($0["transactions"]!)" }
                == ["2024-06 4.99 1"])
        #expect(try Self.csv(workspace.file("r/trial_conversion.csv")).map { "\($0["trials"]!) \($0["converted"]!)" } == ["1 1"])
    }

    /// Item 8: the summary's churn line is made of the rate's own numbers (its numerator and active_start), and
    /// `churned` is said for what it is; a recovery rate with open episodes is said to be provisional.
    @Test func theHeadlineIsBuiltFromTheNumbersOfItsRates() throws {
        let workspace = try Self.ledger(subscribers: 250, months: 5, seed: 8)
        // May is the last complete month and its billing retries are still running at its end: open episodes.
        let run = try SubledgerProcess.run(["report", "--db", "l.sqlite", "--out", "r", "--prices", "sim/prices.csv", "--as-of", "2024-05-31"],
                                           in: workspace, tag: "report")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("last complete month 2024-05:"), "\(run.stdout)")
        let total = try #require(try Self.csv(workspace.file("r/subscriptions_monthly.csv"))
            .first { $0["month"] == "2024-05" && $0["platform"] == "all" && $0["product_id"] == "all" })
        let line = try #require(run.stdout.split(separator: "\n").first { $0.hasPrefix("  churn rate ") }).description
        // "  churn rate R: N of the D active at the start ended; C paid spells ended in all (...); net churn rate ..."
        let parts = line.dropFirst("  churn rate ".count).split(separator: " ")
        let rate = String(parts[0].dropLast())
        let numerator = try #require(Int(parts[1]))
        #expect(rate == total["churn_rate"], "\(line)")
        #expect(String(parts[4]) == total["active_start"], "\(line)")
        #expect(String(format: "%.6f", Double(numerator) / Double(Int(total["active_start"]!)!)) == total["churn_rate"], "\(line)")
        #expect(line.contains("; \(total["churned"]!) paid spells ended in all"), "\(line)")
        #expect(line.contains("net churn rate \(total["net_churn_rate"]!) = (\(total["churned"]!) churned - \(total["reactivated"]!) reactivated) / \(total["active_start"]!)"))

        let grace = try Self.csv(workspace.file("r/grace_recovery.csv")).filter { $0["month"] == "2024-05" }
        #expect(grace.contains { $0["open"] != "0" }, "the fixture must have open episodes in May")
        let recovery = try #require(run.stdout.split(separator: "\n").first { $0.hasPrefix("  billing-issue recovery rate") }).description
        for row in grace {
            let open = row["open"]!
            #expect(recovery.contains(open == "0" ? "\(row["platform"]!) " : "\(open) still open: provisional"), "\(row): \(recovery)")
        }
        let page = try String(contentsOfFile: workspace.file("r/report.html"), encoding: .utf8)
        #expect(page.contains("still open: <strong>provisional</strong>"))
    }

    /// Item 9: `--as-of 2024-05-31` is the end of that day in `--timezone`, the same instant as its RFC 3339
    /// form, and the as-of is printed in the report's zone with its offset (summary, summary.json, report.html).
    @Test func aDateAsOfIsTheEndOfThatDayInTheReportsZone() throws {
        let workspace = try Self.ledger(subscribers: 60, months: 6, seed: 3)
        let date = try SubledgerProcess.run(["report", "--db", "l.sqlite", "--out", "date", "--as-of", "2024-05-31",
                                             "--timezone", "Asia/Tokyo"], in: workspace, tag: "date")
        #expect(date.status == 0, "\(date.stderr)")
        let instant = try SubledgerProcess.run(["report", "--db", "l.sqlite", "--out", "instant", "--as-of", "2024-05-31T14:59:59.999Z",
                                                "--timezone", "Asia/Tokyo"], in: workspace, tag: "instant")
        #expect(instant.status == 0)
        for name in ["subscriptions_monthly.csv", "revenue_monthly.csv", "mrr_movements.csv", "retention_cohorts.csv",
                     "trial_conversion.csv", "grace_recovery.csv"] {
            #expect(FileManager.default.contents(atPath: workspace.file("date/\(name)")) == FileManager.default.contents(atPath: workspace.file("instant/\(name)")),
                    "\(name): a date is the last millisecond of that day in Tokyo")
        }
        #expect(date.stdout.contains("as of 2024-05-31T23:59:59.999+09:00 (Asia/Tokyo); last complete month 2024-05"), "\(date.stdout)")
        #expect(try Self.json(workspace.file("date/summary.json"))["as_of"] as? String == "2024-05-31T23:59:59.999+09:00")
        let page = try String(contentsOfFile: workspace.file("date/report.html"), encoding: .utf8)
        #expect(page.contains("<time id=\"as-of\" datetime=\"2024-05-31T23:59:59.999+09:00\">2024-05-31T23:59:59.999+09:00</time>"))

        // A day with a daylight-saving change (23 hours in New York): its end is still that day's last millisecond.
        let dst = try SubledgerProcess.run(["report", "--db", "l.sqlite", "--out", "dst", "--as-of", "2024-03-10",
                                            "--timezone", "America/New_York", "--format", "json"], in: workspace, tag: "dst")
        #expect(try Self.json(workspace.file("dst/summary.json"))["as_of"] as? String == "2024-03-10T23:59:59.999-04:00", "\(dst.stderr)")
        let utc = try SubledgerProcess.run(["report", "--db", "l.sqlite", "--out", "utc", "--as-of", "2024-04-30", "--format", "json"],
                                           in: workspace, tag: "utc")
        #expect(utc.stdout.contains("as of 2024-04-30T23:59:59.999Z (UTC); last complete month 2024-04"), "\(utc.stdout)")
        for wrong in ["2024-02-30", "2024-5-31", "31.05.2024"] {
            let result = try SubledgerProcess.run(["report", "--db", "l.sqlite", "--as-of", wrong], in: workspace, tag: "wrong")
            #expect(result.status == 2, "\(wrong)")
            #expect(result.stderr.contains("--as-of '\(wrong)' is not an RFC 3339 time (2024-04-30T23:59:59.999Z), a date"), "\(result.stderr)")
        }
    }

    /// Item 10: report.html for people: rates in percent, heat maps in percent with a legend, weekly retention
    /// readable, a chart per product, totals in the `--currency` (an ISO 4217 code, else exit 2); and still
    /// every figure checked against its CSV cell by `scripts/browser-check.py` (run here on the page as written,
    /// which has no script, so its DOM is its text).
    @Test func thePageIsForPeopleAndStillChecked() throws {
        let workspace = try Self.ledger(subscribers: 120, months: 8, seed: 21)
        var rates = ["month,currency,rate_to_reporting_currency"]
        for month in 1...8 { rates += ["EUR", "GBP", "JPY"].map { "2024-0\(month),\($0),\($0 == "JPY" ? "0.0066" : $0 == "EUR" ? "1.08" : "1.27")" } }
        try Data((rates.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: workspace.file("fx.csv")))
        let refused = try SubledgerProcess.run(["report", "--db", "l.sqlite", "--currency", "DOLLARS", "--fx-rates", "fx.csv"],
                                               in: workspace, tag: "dollars")
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("--currency DOLLARS is not an ISO 4217 currency code"), "\(refused.stderr)")

        let report = try SubledgerProcess.run(["report", "--db", "l.sqlite", "--out", "r", "--prices", "sim/prices.csv",
                                               "--currency", "usd", "--fx-rates", "fx.csv"], in: workspace, tag: "report")
        #expect(report.status == 0, "\(report.stderr)")
        let page = try String(contentsOfFile: workspace.file("r/report.html"), encoding: .utf8)
        let total = try #require(try Self.csv(workspace.file("r/subscriptions_monthly.csv")).last { $0["platform"] == "all" })
        let shown = try #require(total["churn_rate"].flatMap { Double($0) }.map { String(format: "%.1f%%", $0 * 100) })
        #expect(page.contains(">\(shown)</td>"), "churn rate \(total["churn_rate"]!) as \(shown)")
        #expect(!page.contains(">\(total["churn_rate"]!)</td>"), "no rate as a fraction in the tables")
        #expect(page.contains("retention rate 0%") && page.contains(">100%</text>"), "the heat maps' legend is in percent")
        // Weekly retention has a column per week: it scrolls, every column labelled.
        #expect(page.contains("<div class=\"scroll\""), "a weekly heat map wider than the page scrolls")
        let products = Set(try Self.csv(workspace.file("r/subscriptions_monthly.csv")).filter { $0["product_id"] != "all" }
            .map { $0["platform"]! + " " + $0["product_id"]! })
        let section = try #require(page.components(separatedBy: "id=\"chart-products\"").dropFirst().first?.components(separatedBy: "</section>").first)
        for product in products { #expect(section.contains("<h3>\(product)</h3>"), "a panel for \(product)") }
        #expect(page.contains("<h3>Revenue, all currencies in USD</h3>"))

        let python = ["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) }
        if let python {
            var root = URL(fileURLWithPath: #filePath)
            for _ in 0..<3 { root.deleteLastPathComponent() }
            try Data().write(to: URL(fileURLWithPath: workspace.file("console.log")))
            let check = try ChildProcess(python, [
                root.appendingPathComponent("scripts/browser-check.py").path, "--dom", workspace.file("r/report.html"),
                "--console", workspace.file("console.log"), "--csv-dir", workspace.file("r"), "--source", workspace.file("r/report.html"),
            ], directory: workspace.path, environment: ProcessInfo.processInfo.environment,
               stdout: workspace.file("check.out"), stderr: workspace.file("check.out"))
            let status = check.waitForExit()
            let text = String(decoding: FileManager.default.contents(atPath: workspace.file("check.out")) ?? Data(), as: UTF8.self)
            #expect(status == 0, "\(text)")
            #expect(text.contains("browser-check: OK"), "\(text)")
        }
    }
}

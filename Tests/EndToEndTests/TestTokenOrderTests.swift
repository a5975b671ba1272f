import Facts
import Foundation
import Ingest
import Ledger
import Pipeline
import Testing

/// Issue 13, class 1: test status belongs to the purchase token. Whichever record of a test token arrives first
/// (its RTDN before the resource that says "test", or after it; in one file or in several; in one run or in
/// several), the ledger reaches the same state, `status` counts every record of the token as excluded (`test`),
/// and no report shows any of it.
@Suite(.serialized) struct TestTokenOrderTests {
    static let at = IngestFixtures.march2024
    static let day = IngestFixtures.day

    /// A Pub/Sub push of `rtdn`, as Google delivers it.
    static func push(_ rtdn: String, messageId: String) -> String {
        #"{"message":{"attributes":{},"data":"\#(Data(rtdn.utf8).base64EncodedString())","messageId":"\#(messageId)","publishTime":"2024-03-01T12:00:01.000Z"},"subscription":"projects/example/subscriptions/play-rtdn"}"#
    }

    static func oneTimeRTDN(token: String, type: Int, at: Millis) -> String {
        #"{"version":"1.0","packageName":"com.example.app","eventTimeMillis":"\#(at)","oneTimeProductNotification":{"version":"1.0","notificationType":\#(type),"purchaseToken":"\#(token)","sku":"coins_500"}}"#
    }

    static func subscriptionRTDN(token: String, type: Int, at: Millis) -> String {
        #"{"version":"1.0","packageName":"com.example.app","eventTimeMillis":"\#(at)","subscriptionNotification":{"version":"1.0","notificationType":\#(type),"purchaseToken":"\#(token)","subscriptionId":"premium_monthly"}}"#
    }

    /// The three records of a license tester's one-time product: ONE_TIME_PRODUCT_PURCHASED, the
    /// `purchases.products.get` body with `purchaseType: 0`, ONE_TIME_PRODUCT_CANCELED.
    static let testProduct = [
        push(oneTimeRTDN(token: "tester-coins", type: 1, at: at), messageId: "9100000001"),
        #"{"received_at":"2024-03-01T12:00:20Z","source":"google.product.v1","package_name":"com.example.app","product_id":"coins_500","purchase_token":"tester-coins","currency":"USD","body":{"kind":"androidpublisher#productPurchase","purchaseTimeMillis":"\#(at)","purchaseState":0,"consumptionState":0,"developerPayload":"","orderId":"GPA.3300-1111-2222-33333","purchaseType":0,"acknowledgementState":1,"regionCode":"US"}}"#,
        push(oneTimeRTDN(token: "tester-coins", type: 2, at: at + 3_600_000), messageId: "9100000002"),
    ]

    /// The three records of a license tester's subscription: SUBSCRIPTION_PURCHASED, the v2 resource with
    /// `testPurchase: {}`, SUBSCRIPTION_RENEWED.
    static let testSubscription = [
        push(subscriptionRTDN(token: "tester-sub", type: 4, at: at), messageId: "9100000003"),
        #"{"received_at":"2024-03-01T12:00:30Z","source":"google.subscription.v2","package_name":"com.example.app","subscription_id":"premium_monthly","purchase_token":"tester-sub","body":{"kind":"androidpublisher#subscriptionPurchaseV2","regionCode":"US","startTime":"2024-03-01T12:00:00Z","subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","latestOrderId":"GPA.3311-4444-5555-66666","testPurchase":{},"acknowledgementState":"ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED","lineItems":[{"productId":"premium_monthly","expiryTime":"2024-04-01T12:00:00Z","autoRenewingPlan":{"autoRenewEnabled":true,"recurringPrice":{"currencyCode":"USD","units":"4","nanos":990000000}},"offerDetails":{"basePlanId":"monthly","offerTags":[]}}]}}"#,
        push(subscriptionRTDN(token: "tester-sub", type: 2, at: at + 30 * day), messageId: "9100000004"),
    ]

    /// A paying subscriber beside them, whose records are used.
    static let production = [IngestFixtures.notification(1), IngestFixtures.subscription(1)]

    static let permutations: [[Int]] = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]]

    /// How the records reach the ledger. Each record is in a file of its own, and the files are read in the
    /// order given (one run over all of them, or one run per file); or all records are in one file, in that order.
    enum Arrival: CaseIterable { case filesInOneRun, oneRunPerFile, oneFile }

    /// What a ledger looks like from the outside: its digest, `status`, counts by source, the facts as reports
    /// read them, and every report file.
    struct Observed: Equatable {
        var digest: String
        var statistics: IngestStatistics
        var bySource: [SourceCount]
        var facts: [Fact]
        var reports: [String: String]
    }

    private func job(_ database: String) throws -> IngestJob {
        IngestJob(ledger: .sqlite(path: database), parser: RecordParser(times: IngestFixtures.times),
                  translator: try IngestFixtures.translator(), progress: .none)
    }

    /// Ingests the test tokens' records in `order` (the same permutation for both tokens) as `arrival` says;
    /// returns what the ledger shows, and the run's statistics when it was one run.
    private func ingest(order: [Int], arrival: Arrival, in directory: TemporaryDirectory) throws -> (Observed, IngestStatistics?) {
        // A ledger per order, the input files at the same paths every time (their paths are the provenance).
        let database = directory.file("ledger-\(order.map(String.init).joined()).sqlite")
        let production = directory.file("production.ndjson")
        try IngestFixtures.write(Self.production, to: production)
        var run: IngestStatistics?
        switch arrival {
        case .filesInOneRun, .oneRunPerFile:
            var files: [String] = []
            for index in order {
                for (name, records) in [("product", Self.testProduct), ("subscription", Self.testSubscription)] {
                    let file = directory.file("\(name)-\(index).ndjson")
                    try IngestFixtures.write([records[index]], to: file)
                    files.append(file)
                }
            }
            files.insert(production, at: 2)
            if arrival == .filesInOneRun {
                run = try job(database).run(inputs: files).statistics
            } else {
                for file in files { _ = try job(database).run(inputs: [file]).statistics }
            }
        case .oneFile:
            let file = directory.file("all.ndjson")
            try IngestFixtures.write(order.flatMap { [Self.testProduct[$0], Self.testSubscription[$0]] }, to: file)
            run = try job(database).run(inputs: [file, production]).statistics
        }
        let ledger = try SQLiteLedger(path: database, access: .readOnly)
        let out = directory.file("reports-\(order.map(String.init).joined())")
        let settings = ReportJob.Settings(asOf: Self.at + 60 * Self.day, formats: [.csv, .json], outputDirectory: out,
                                          generatedBy: "subledger test")
        _ = try ReportJob(settings: settings).run(ledger: ledger)
        var reports: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: out) {
            reports[name] = try String(contentsOfFile: out + "/" + name, encoding: .utf8)
        }
        var facts: [Fact] = []
        try ledger.forEachSubscription(buckets: 0...LedgerBucket.count - 1) { _, _, group in facts += group }
        return (Observed(digest: try ledger.contentDigest(), statistics: try ledger.statistics(),
                         bySource: try ledger.countsBySource(), facts: facts, reports: reports), run)
    }

    /// Every permutation of (RTDN, resource, second RTDN), for a test one-time product and a test subscription at
    /// once, arriving file by file in one run, run by run, or within one file.
    @Test(arguments: Arrival.allCases)
    func everyArrivalOrderGivesTheSameLedgerCountsAndReports(_ arrival: Arrival) throws {
        var reference: Observed?
        let directory = try TemporaryDirectory()
        for order in Self.permutations {
            let (observed, run) = try ingest(order: order, arrival: arrival, in: directory)
            if let reference {
                // Within one file, the order is the records' positions, which the ledger keeps as their
                // provenance; everything else is the same. Across files, the ledger is the same to the byte.
                if arrival != .oneFile { #expect(observed.digest == reference.digest, "order \(order)") }
                #expect(observed.statistics == reference.statistics, "order \(order)")
                #expect(observed.bySource == reference.bySource, "order \(order)")
                #expect(observed.facts == reference.facts, "order \(order)")
                #expect(observed.reports == reference.reports, "order \(order)")
            } else {
                reference = observed
            }
            // One run into a new ledger reports exactly what `status` reports afterwards.
            if let run { #expect(run == observed.statistics, "order \(order)") }
        }
        let statistics = try #require(reference?.statistics)
        #expect(statistics.read == 8)
        #expect(statistics.used == 2)
        #expect(statistics.excluded == 6)
        #expect(statistics.excludedByReason == ["test": 6])
        #expect(reference?.bySource == [SourceCount(source: "google.product.v1", used: 0, excluded: 1),
                                        SourceCount(source: "google.rtdn", used: 1, excluded: 4),
                                        SourceCount(source: "google.subscription.v1", used: 1, excluded: 0),
                                        SourceCount(source: "google.subscription.v2", used: 0, excluded: 1)])
        // The ledger keeps the test tokens' facts (a later record may need them), but no report shows them.
        #expect(reference?.facts.contains { $0.subject == "tester-coins" && $0.kind == .testPurchase } == true)
        let revenue = try #require(reference?.reports["revenue_monthly.csv"])
        #expect(!revenue.contains("coins_500"))
        // The paying subscriber's renewal on 03-31 is announced by its SUBSCRIPTION_RENEWED alone: an order all the
        // same, at the price of the one before, running into April.
        #expect(revenue == "month,platform,product_id,currency,gross,refunds,net,transactions,refunded_transactions,unpriced_transactions,mrr_end\n"
                + "2024-03,google,premium_monthly,EUR,9.98,0.00,9.98,2,0,0,4.99\n2024-04,google,premium_monthly,EUR,0.00,0.00,0.00,0,0,0,4.99\n")
        #expect(reference?.reports["summary.json"]?.contains(#""excluded_by_reason":{"test":6}"#) == true)
    }

    /// A later run that brings the resource reclassifies the RTDN an earlier run stored: `status` then counts it
    /// as excluded; each run's own counts describe its own records.
    @Test func aLaterRunReclassifiesAnEarlierRunsRecords() throws {
        let directory = try TemporaryDirectory()
        let database = directory.file("ledger.sqlite")
        try IngestFixtures.write([Self.testProduct[0]], to: directory.file("1.ndjson"))
        try IngestFixtures.write([Self.testProduct[1]], to: directory.file("2.ndjson"))
        let first = try job(database).run(inputs: [directory.file("1.ndjson")]).statistics
        #expect(first.used == 1 && first.excluded == 0)
        let second = try job(database).run(inputs: [directory.file("2.ndjson")]).statistics
        #expect(second.used == 0 && second.excludedByReason == ["test": 1])
        let status = try SQLiteLedger(path: database, access: .readOnly).statistics()
        #expect(status.used == 0 && status.excludedByReason == ["test": 2] && status.read == 2)
    }
}

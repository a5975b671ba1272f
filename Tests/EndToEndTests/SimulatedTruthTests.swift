import Foundation
import Simulator
import Testing

/// The end-to-end test of the whole pipeline: `subledger simulate` writes archives and the truth it simulated,
/// the real `subledger` binary ingests the archives and writes the reports, and every cell of every table is
/// held to `truth.json` (in UTC, in Asia/Tokyo, and with an as-of in the middle of the data), together with
/// the ingest counts. The simulator shares no code with the pipeline, so agreement means two independent
/// readings of `metrics.md` agree.
@Suite(.serialized)
struct SimulatedTruthTests {
    @Test(arguments: [UInt64(11), 2024, 777])
    func reportsMatchTheSimulatedTruth(seed: UInt64) throws {
        let workspace = try TemporaryDirectory()
        let directory = workspace.path
        try Simulation(subscribers: 120, months: 12, seed: seed).write(to: directory)
        let truth = try Truth(path: "\(directory)/truth.json")
        let database = "\(directory)/ledger.sqlite"

        let ingest = try SubledgerProcess.run(["ingest", "--json", "--db", database, "--apple-root-ca", "\(directory)/apple-root.der",
                                         "--bundle-id", "com.example.subledger", "--package-name", "com.example.subledger",
                                         "\(directory)/archives"], in: workspace, tag: "ingest")
        #expect(ingest.status == 1, "the simulated noise is quarantined, so ingest exits 1: \(ingest.stderr)")
        let counts = try Truth.object(ingest.stdout)
        let records = counts["records"] as? [String: Any] ?? [:]
        for key in ["read", "used", "duplicate", "excluded", "quarantined"] {
            if let expected = truth.ingest[key] as? Int {
                #expect(records[key] as? Int == expected, "ingest \(key): \(records[key] ?? "nil") != truth \(expected)")
            }
        }
        for key in ["excluded_by_reason", "quarantined_by_reason", "warnings"] {
            let expected = try #require(truth.ingest[key] as? [String: Int], "truth.json has ingest.\(key)")
            #expect(counts[key] as? [String: Int] == expected, "ingest \(key)")
        }
        // The simulated wild data is there to be read: test tokens, epoch seconds, reused message ids.
        let warnings = try #require(truth.ingest["warnings"] as? [String: Int])
        #expect((warnings["timestamps_in_seconds"] ?? 0) > 0 && (warnings["message_id_conflicts"] ?? 0) > 0)
        #expect((truth.ingest["excluded_by_reason"] as? [String: Int])?["test"] ?? 0 > 2)

        for scenario in truth.scenarios {
            let out = "\(directory)/reports-\(scenario.name)"
            let report = try SubledgerProcess.run(["report", "--db", database, "--out", out, "--as-of", scenario.asOf,
                                             "--timezone", scenario.timeZone, "--prices", "\(directory)/prices.csv",
                                             "--format", "csv,json"], in: workspace, tag: "report-\(scenario.name)")
            try #require(report.status == 0, "report failed: \(report.stderr)")
            var differences: [String] = []
            for (table, expectedRows) in scenario.tables.sorted(by: { $0.key < $1.key }) {
                let csv = try String(contentsOfFile: "\(out)/\(table).csv", encoding: .utf8)
                differences += CSVComparison.differences(table: table, csv: csv, expected: expectedRows)
            }
            #expect(differences.isEmpty, """
                seed \(seed), scenario \(scenario.name): \(differences.count) cells differ from truth.json:
                \(differences.prefix(40).joined(separator: "\n"))
                """)
            try IdentityCheck.check(csv: String(contentsOfFile: "\(out)/subscriptions_monthly.csv", encoding: .utf8))
            try MRRIdentityCheck.check(movements: String(contentsOfFile: "\(out)/mrr_movements.csv", encoding: .utf8),
                                       revenue: String(contentsOfFile: "\(out)/revenue_monthly.csv", encoding: .utf8))
        }

        // With --currency USD and a rate for every month and currency, the converted amounts obey the identities
        // too (mrr_start_converted is the start at this month's rate, so it is not compared across months).
        let utc = try #require(truth.scenarios.first { $0.name == "utc" })
        let fx = "\(directory)/fx.csv"
        let labels = Set(utc.tables["revenue_monthly", default: []].compactMap { $0["month"] })
        try ("month,currency,rate_to_reporting_currency\n" + labels.sorted().flatMap { month in
            [("EUR", "1.0811"), ("GBP", "1.2673"), ("JPY", "0.0067")].map { "\(month),\($0.0),\($0.1)\n" }
        }.joined()).write(toFile: fx, atomically: true, encoding: .utf8)
        let out = "\(directory)/reports-usd"
        let report = try SubledgerProcess.run(["report", "--db", database, "--out", out, "--as-of", utc.asOf, "--timezone", "UTC",
                                               "--prices", "\(directory)/prices.csv", "--currency", "USD", "--fx-rates", fx,
                                               "--format", "csv"], in: workspace, tag: "report-usd")
        try #require(report.status == 0, "report failed: \(report.stderr)")
        let movements = try String(contentsOfFile: "\(out)/mrr_movements.csv", encoding: .utf8)
        let revenue = try String(contentsOfFile: "\(out)/revenue_monthly.csv", encoding: .utf8)
        try MRRIdentityCheck.check(movements: movements, revenue: revenue)
        try MRRIdentityCheck.check(movements: movements, revenue: revenue, suffix: "_converted")
        #expect(CSVComparison.differences(table: "mrr_movements", csv: movements, expected: utc.tables["mrr_movements", default: []])
                .allSatisfy { $0.contains("_converted") }, "the converted run changes no unconverted cell")
    }
}

/// `truth.json` as the simulator writes it.
struct Truth {
    struct Scenario {
        var name: String
        var timeZone: String
        var asOf: String
        /// table name → rows (column → cell text), in CSV order.
        var tables: [String: [[String: String]]]
    }

    var ingest: [String: Any]
    var scenarios: [Scenario]

    init(path: String) throws {
        let root = try Self.object(try String(contentsOfFile: path, encoding: .utf8))
        ingest = root["ingest"] as? [String: Any] ?? [:]
        scenarios = (root["scenarios"] as? [[String: Any]] ?? []).map { scenario in
            let tables = (scenario["tables"] as? [String: [[String: Any]]] ?? [:]).mapValues { rows in
                rows.map { row in row.mapValues { "\($0)" } }
            }
            return Scenario(name: scenario["name"] as? String ?? "?", timeZone: scenario["timezone"] as? String ?? "UTC",
                            asOf: scenario["as_of"] as? String ?? "", tables: tables)
        }
    }

    static func object(_ text: String) throws -> [String: Any] {
        let value = try JSONSerialization.jsonObject(with: Data(text.utf8))
        return try #require(value as? [String: Any], "not a JSON object: \(text.prefix(200))")
    }
}

/// Cell-by-cell comparison of a CSV file with the truth's rows; each difference says table, row key and column.
enum CSVComparison {
    /// The key columns of each table (cli.md: rows are sorted by them).
    static let keys: [String: [String]] = [
        "subscriptions_monthly": ["month", "platform", "product_id"],
        "revenue_monthly": ["month", "platform", "product_id", "currency"],
        "mrr_movements": ["month", "platform", "currency"],
        "retention_cohorts": ["cohort_month", "platform", "duration", "period"],
        "trial_conversion": ["cohort_month", "platform", "product_id"],
        "grace_recovery": ["month", "platform"],
    ]

    static func differences(table: String, csv: String, expected: [[String: String]]) -> [String] {
        let lines = csv.split(separator: "\n", omittingEmptySubsequences: true).map { String($0) }
        guard let header = lines.first?.split(separator: ",", omittingEmptySubsequences: false).map(String.init) else {
            return ["\(table): empty file"]
        }
        let keyColumns = keys[table] ?? []
        func key(_ row: [String: String]) -> String { keyColumns.map { row[$0] ?? "" }.joined(separator: "/") }
        let actual = lines.dropFirst().map { line in
            Dictionary(uniqueKeysWithValues: zip(header, line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)))
        }
        var byKey: [String: [String: String]] = [:]
        for row in actual { byKey[key(row)] = row }
        var expectedKeys: Set<String> = []
        var result: [String] = []
        for row in expected {
            let rowKey = key(row)
            expectedKeys.insert(rowKey)
            guard let got = byKey[rowKey] else {
                result.append("\(table) \(rowKey): row missing from the report")
                continue
            }
            for column in header where (row[column] ?? "") != (got[column] ?? "") {
                result.append("\(table) \(rowKey) \(column): report \(got[column] ?? "nil") != truth \(row[column] ?? "nil")")
            }
        }
        for row in actual where !expectedKeys.contains(key(row)) {
            result.append("\(table) \(key(row)): row in the report but not in the truth")
        }
        if result.isEmpty, actual.map(key) != expected.map(key) {
            result.append("\(table): rows are not in the truth's order")
        }
        return result
    }
}

/// The identity of `metrics.md`, on every row of a written `subscriptions_monthly.csv`.
enum IdentityCheck {
    static func check(csv: String) throws {
        let lines = csv.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        let header = try #require(lines.first)
        func column(_ name: String) throws -> Int { try #require(header.firstIndex(of: name)) }
        let start = try column("active_start"), new = try column("new"), reactivated = try column("reactivated")
        let changesIn = try column("product_changes_in"), changesOut = try column("product_changes_out")
        let churned = try column("churned"), end = try column("active_end")
        let reasons = try ["churned_voluntary", "churned_involuntary", "churned_refund", "churned_paused", "churned_other"].map(column)
        for row in lines.dropFirst() {
            let value = { (index: Int) in Int(row[index]) ?? -1_000_000 }
            #expect(value(end) == value(start) + value(new) + value(reactivated) + value(changesIn) - value(changesOut) - value(churned),
                    "identity broken in \(row.joined(separator: ","))")
            #expect(value(churned) == reasons.map(value).reduce(0, +), "churn reasons do not add up in \(row.joined(separator: ","))")
        }
    }
}

/// metrics.md's three identities of mrr_movements, on every row of a written `mrr_movements.csv` (amounts compared
/// in integer cents, as written): the movements lead from `mrr_start` to `mrr_end`; `mrr_start` is the previous
/// month's `mrr_end` of the platform and currency (0.00 without a row); `mrr_end` is the sum of
/// `revenue_monthly.csv`'s `mrr_end` over the products of the month, platform and currency. With `suffix`
/// `_converted`, the first and the last on the converted columns.
enum MRRIdentityCheck {
    static func check(movements: String, revenue: String, suffix: String = "") throws {
        let rows = try table(movements)
        let revenueRows = try table(revenue)
        try #require(!rows.isEmpty, "mrr_movements.csv has no rows")
        func cents(_ text: String?) -> Int? {
            guard let text, !text.isEmpty else { return nil }
            let negative = text.hasPrefix("-")
            let parts = text.dropFirst(negative ? 1 : 0).split(separator: ".")
            guard parts.count == 2, parts[1].count == 2, let whole = Int(parts[0]), let fraction = Int(parts[1]) else { return nil }
            return (negative ? -1 : 1) * (whole * 100 + fraction)
        }
        var endByKey: [String: Int] = [:]
        for row in rows { endByKey["\(row["month"] ?? "")/\(row["platform"] ?? "")/\(row["currency"] ?? "")"] = cents(row["mrr_end" + suffix]) }
        var revenueByKey: [String: Int] = [:]
        for row in revenueRows {
            revenueByKey["\(row["month"] ?? "")/\(row["platform"] ?? "")/\(row["currency"] ?? "")", default: 0] += cents(row["mrr_end" + suffix]) ?? 0
        }
        for row in rows {
            let text = ["month", "platform", "currency"].map { row[$0] ?? "" }.joined(separator: "/")
            let amounts = ["mrr_start", "new", "expansion", "contraction", "churned", "reactivation", "mrr_end"].map { cents(row[$0 + suffix]) }
            guard amounts.allSatisfy({ $0 != nil }) else {
                Issue.record("\(text): an amount\(suffix) is not written with two decimals: \(row)")
                continue
            }
            let a = amounts.map { $0 ?? 0 }
            #expect(a.allSatisfy { $0 >= 0 }, "\(text): a negative amount\(suffix)")
            #expect(a[6] == a[0] + a[1] + a[2] + a[5] - a[3] - a[4], "\(text): mrr_end\(suffix) != mrr_start + new + expansion + reactivation - contraction - churned")
            #expect(a[6] == revenueByKey[text, default: 0], "\(text): mrr_end\(suffix) \(a[6]) != revenue_monthly's \(revenueByKey[text, default: 0])")
            guard suffix.isEmpty, let month = row["month"] else { continue }
            let parts = month.split(separator: "-").compactMap { Int($0) }
            let previous = parts[0] * 12 + parts[1] - 2
            let label = String(format: "%04d-%02d", previous / 12, previous % 12 + 1)
            let before = endByKey["\(label)/\(row["platform"] ?? "")/\(row["currency"] ?? "")"] ?? 0
            #expect(a[0] == before, "\(text): mrr_start \(a[0]) != the previous month's mrr_end \(before)")
        }
        // Every month, platform and currency with MRR in revenue_monthly has its row.
        for (key, total) in revenueByKey where total != 0 {
            #expect(endByKey[key] != nil, "\(key): revenue_monthly has MRR but mrr_movements has no row")
        }
    }

    private static func table(_ csv: String) throws -> [[String: String]] {
        let lines = csv.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        let header = try #require(lines.first)
        return lines.dropFirst().map { Dictionary(uniqueKeysWithValues: zip(header, $0)) }
    }
}

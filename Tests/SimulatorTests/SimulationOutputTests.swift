import Crypto
import Foundation
import SystemZlib
import Testing
import X509
import ZIPFoundation
@testable import Simulator

/// A small simulation written once and shared by the tests below (150 subscribers, 12 months).
enum Fixture {
    static let directory: String = {
        // A fixed path: each run rewrites it instead of leaving a new directory behind.
        let path = NSTemporaryDirectory() + "subledger-simulator-tests-fixture"
        _ = try? Simulation(subscribers: 150, months: 12, seed: 7).write(to: path)
        return path
    }()

    static var truth: [String: Any] {
        guard let data = FileManager.default.contents(atPath: directory + "/truth.json"),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return [:] }
        return object
    }

    static func files(under folder: String) -> [String] {
        let base = directory + "/" + folder
        return ((FileManager.default.enumerator(atPath: base)?.allObjects as? [String]) ?? [])
            .filter { !$0.hasSuffix("/") }.sorted().map { base + "/" + $0 }
    }

    /// Gunzips a (multi-member) gzip stream; returns the text and the number of members.
    static func gunzip(_ bytes: [UInt8]) -> (text: String, members: Int, complete: Bool) {
        let result = gunzipBytes(bytes)
        return (String(decoding: result.bytes, as: UTF8.self), result.members, result.complete)
    }

    static func gunzipBytes(_ bytes: [UInt8]) -> (bytes: [UInt8], members: Int, complete: Bool) {
        var output: [UInt8] = []
        var members = 0
        var offset = 0
        var complete = true
        while offset < bytes.count {
            var stream = z_stream()
            guard inflateInit2_(&stream, 31, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else { break }
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            var status: Int32 = Z_OK
            var input = Array(bytes[offset...])
            input.withUnsafeMutableBufferPointer { inBuffer in
                stream.next_in = inBuffer.baseAddress
                stream.avail_in = UInt32(inBuffer.count)
                repeat {
                    chunk.withUnsafeMutableBufferPointer { out in
                        stream.next_out = out.baseAddress
                        stream.avail_out = UInt32(out.count)
                        status = inflate(&stream, Z_NO_FLUSH)
                        output.append(contentsOf: out[0..<(out.count - Int(stream.avail_out))])
                    }
                } while status == Z_OK
            }
            let consumed = input.count - Int(stream.avail_in)
            inflateEnd(&stream)
            guard status == Z_STREAM_END else { complete = false; break }
            members += 1
            offset += consumed
        }
        return (output, members, complete)
    }

    static func read(_ path: String) -> [UInt8] { Array(FileManager.default.contents(atPath: path) ?? Data()) }

    /// Every line of every daily file.
    static var dailyLines: [String] {
        files(under: "archives/daily").flatMap { gunzip(read($0)).text.split(separator: "\n").map(String.init) }
    }

    /// Members of the notification tars: (name, JSON text).
    static var tarMembers: [(String, String)] {
        var result: [(String, String)] = []
        for path in files(under: "archives/apple-notifications") {
            let tar = gunzipBytes(read(path)).bytes
            var offset = 0
            while offset + 512 <= tar.count, tar[offset] != 0 {
                let name = String(decoding: tar[offset..<offset + 100].prefix { $0 != 0 }, as: UTF8.self)
                let sizeText = String(decoding: tar[offset + 124..<offset + 135], as: UTF8.self)
                let size = Int(sizeText, radix: 8) ?? 0
                let body = Array(tar[offset + 512..<offset + 512 + size])
                result.append((name, name.hasSuffix(".gz") ? gunzip(body).text : String(decoding: body, as: UTF8.self)))
                offset += 512 + (size + 511) / 512 * 512
            }
        }
        return result
    }

    static func base64URL(_ text: Substring) -> Data? {
        var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while s.count % 4 != 0 { s += "=" }
        return Data(base64Encoded: s)
    }
}

struct TruthIdentityTests {
    static func cents(_ text: String) -> Int {
        let negative = text.hasPrefix("-")
        let parts = text.dropFirst(negative ? 1 : 0).split(separator: ".")
        let value = (Int(parts[0]) ?? 0) * 100 + (Int(parts.count > 1 ? parts[1] : "0") ?? 0)
        return negative ? -value : value
    }

    @Test func everyRowKeepsTheIdentities() throws {
        let scenarios = try #require(Fixture.truth["scenarios"] as? [[String: Any]])
        #expect(scenarios.map { $0["name"] as? String } == ["utc", "tokyo", "mid"])
        var rowsChecked = 0
        for scenario in scenarios {
            let tables = try #require(scenario["tables"] as? [String: [[String: String]]])
            let monthly = try #require(tables["subscriptions_monthly"])
            #expect(monthly.count > 20)
            for row in monthly {
                let n = { (key: String) in Int(row[key] ?? "") ?? -1 }
                #expect(n("active_end") == n("active_start") + n("new") + n("reactivated") + n("product_changes_in")
                        - n("product_changes_out") - n("churned"), "\(row)")
                #expect(n("churned") == n("churned_voluntary") + n("churned_involuntary") + n("churned_refund")
                        + n("churned_paused") + n("churned_other"), "\(row)")
                if row["product_id"] == "all" { #expect(n("product_changes_in") == 0 && n("product_changes_out") == 0) }
                #expect((row["churn_rate"] == "") == (n("active_start") == 0))
                rowsChecked += 1
            }
            for row in try #require(tables["revenue_monthly"]) {
                #expect(TruthIdentityTests.cents(row["net"] ?? "") == TruthIdentityTests.cents(row["gross"] ?? "")
                        - TruthIdentityTests.cents(row["refunds"] ?? ""), "\(row)")
            }
            for row in try #require(tables["grace_recovery"]) {
                let n = { (key: String) in Int(row[key] ?? "") ?? -1 }
                #expect(n("episodes") == n("recovered_in_grace") + n("recovered_in_retry") + n("lost") + n("open"))
            }
            for row in try #require(tables["trial_conversion"]) {
                let n = { (key: String) in Int(row[key] ?? "") ?? -1 }
                #expect(n("trials") == n("converted") + n("abandoned") + n("pending"))
            }
        }
        #expect(rowsChecked > 60)
    }

    @Test func ingestCountsAddUp() throws {
        let ingest = try #require(Fixture.truth["ingest"] as? [String: Any])
        let n = { (key: String) in ingest[key] as? Int ?? -1 }
        #expect(n("read") == n("used") + n("duplicate") + n("excluded") + n("quarantined"))
        #expect(n("duplicate") > 0 && n("excluded") > 0 && n("quarantined") > 0)
        #expect(n("damaged_files") == 1)
        let quarantined = try #require(ingest["quarantined_by_reason"] as? [String: Int])
        #expect(quarantined["bad_signature"] == n("forged") && n("forged") >= 2)
        #expect(quarantined["malformed_json"] == n("garbage") && n("garbage") >= 3)
        let excluded = try #require(ingest["excluded_by_reason"] as? [String: Int])
        #expect(excluded.values.reduce(0, +) == n("excluded"))
    }

    @Test func sameSeedGivesIdenticalFiles() throws {
        let first = NSTemporaryDirectory() + "subledger-sim-\(ProcessInfo.processInfo.processIdentifier)-b"
        let second = NSTemporaryDirectory() + "subledger-sim-\(ProcessInfo.processInfo.processIdentifier)-c"
        let a = try Simulation(subscribers: 40, months: 8, seed: 3).write(to: first)
        let b = try Simulation(subscribers: 40, months: 8, seed: 3).write(to: second)
        #expect(a.files == b.files && a.files.count > 10)
        for file in a.files {
            #expect(FileManager.default.contents(atPath: first + "/" + file) == FileManager.default.contents(atPath: second + "/" + file), "\(file)")
        }
        let other = try Simulation(subscribers: 40, months: 8, seed: 4).write(to: second)
        #expect(FileManager.default.contents(atPath: first + "/truth.json") != FileManager.default.contents(atPath: second + "/truth.json"))
        _ = other
        try? FileManager.default.removeItem(atPath: first)
        try? FileManager.default.removeItem(atPath: second)
    }
}

struct ArchiveTrapTests {
    @Test func dailyFilesHoldEveryRecordShapeAndQuirk() throws {
        let daily = Fixture.files(under: "archives/daily")
        #expect(daily.count > 100)
        #expect(daily.contains { Fixture.gunzip(Fixture.read($0)).members >= 2 }, "a multi-member gzip")
        let lines = Fixture.dailyLines
        let receipts = lines.filter { $0.contains("\"source\":\"apple.verify_receipt\"") }
        #expect(receipts.contains { $0.contains("\"product_id\":\"coins_100\"") }, "a consumable in latest_receipt_info")
        #expect(receipts.contains { $0.contains("\"cancellation_date\":\"0\"") })
        #expect(receipts.contains { $0.contains("\"purchase_date_ms\":\"") }, "numbers as strings")
        #expect(receipts.contains { $0.contains("\"quantity\":1") }, "some numbers as numbers")
        #expect(receipts.contains { $0.contains("\"is_upgraded\":\"true\"") }, "an upgrade")
        #expect(receipts.contains { $0.contains("\"grace_period_expires_date_ms\"") })
        #expect(lines.contains { $0.contains("\"body\":\"{") }, "an escaped-string body")
        let pushes = lines.filter { $0.hasPrefix("{\"message\":") }
        #expect(!pushes.isEmpty, "raw Pub/Sub pushes without an envelope")
        let ids = pushes.compactMap { line in
            line.range(of: "\"messageId\":\"[0-9]+\"", options: .regularExpression).map { String(line[$0]) }
        }
        #expect(Set(ids).count < ids.count, "a redelivered messageId")
        #expect(lines.contains { !$0.hasPrefix("{") }, "a garbage line")
        #expect(lines.contains { $0.contains("\"linkedPurchaseToken\"") }, "a Google linked token")
        #expect(lines.contains { $0.contains("\"autoResumeTimeMillis\"") || $0.contains("SUBSCRIPTION_STATE_PAUSED") }, "a pause")
        let decoded = pushes.compactMap { line -> String? in
            guard let range = line.range(of: "\"data\":\"[^\"]+\"", options: .regularExpression) else { return nil }
            let b64 = line[range].dropFirst(8).dropLast()
            return Data(base64Encoded: String(b64)).map { String(decoding: $0, as: UTF8.self) }
        }
        #expect(decoded.contains { $0.contains("\"notificationType\":10") }, "a PAUSED notification")
        #expect(decoded.contains { $0.contains("\"notificationType\":12") }, "a REVOKED notification")
        #expect(lines.contains { $0.contains("androidpublisher#subscriptionPurchaseV2") })
        #expect(lines.contains { $0.contains("androidpublisher#subscriptionPurchase\"") })
        // v2 resources only from the Play cut-over (2024-09-01) on.
        let v2Received = lines.filter { $0.contains("\"source\":\"google.subscription.v2\"") }.compactMap { line in
            line.range(of: "\"received_at\":\"[0-9-]{10}", options: .regularExpression).map { String(line[$0].suffix(10)) }
        }
        #expect(!v2Received.isEmpty && v2Received.allSatisfy { $0 >= "2024-09-01" })
    }

    /// Issue 13: the archives carry the wild classes the pipeline must read, and truth.json says what a correct
    /// ingest reports about them.
    @Test func dailyFilesHoldTheWildClasses() throws {
        let lines = Fixture.dailyLines
        let resources = lines.filter { $0.contains("\"source\":\"google.subscription.v") }
        // Class 2: resources logged without received_at, showing renewal orders (`GPA.x..N`).
        let bare = resources.filter { !$0.contains("\"received_at\"") }
        #expect(!bare.isEmpty && bare.allSatisfy { $0.range(of: #"GPA\.[0-9-]+\.\.[0-9]+"#, options: .regularExpression) != nil })
        // Class 4: received_at in epoch seconds, as a number (integer or Python float) or a string.
        #expect(lines.contains { $0.range(of: #""received_at":1[0-9]{9}[,.]"#, options: .regularExpression) != nil })
        #expect(lines.contains { $0.range(of: #""received_at":"1[0-9]{9}""#, options: .regularExpression) != nil })
        // Class 1: a tester's resource in a daily file, beside the notifications of its token.
        let tester = try #require(lines.first { $0.contains("\"purchaseType\":0") || $0.contains("\"testPurchase\":{}") })
        #expect(tester.contains("\"purchase_token\""))
        let ingest = try #require(Fixture.truth["ingest"] as? [String: Any])
        let warnings = try #require(ingest["warnings"] as? [String: Int])
        #expect(Set(warnings.keys) == ["timestamps_in_seconds", "message_id_conflicts", "parts_quarantined"])
        #expect((warnings["timestamps_in_seconds"] ?? 0) > 0)
        #expect((ingest["excluded_by_reason"] as? [String: Int])?["test"] ?? 0 > 0)
    }

    @Test func notificationsV1V2AndForgeries() throws {
        let members = Fixture.tarMembers
        #expect(members.contains { $0.0.hasSuffix(".json.gz") }, "a tar member that is gzipped")
        #expect(members.contains { $0.1.contains("\"notification_type\"") && $0.1.contains("\"environment\":\"PROD\"") })
        #expect(members.contains { $0.1.range(of: "\"original_transaction_id\":[0-9]", options: .regularExpression) != nil },
                "a V1 original_transaction_id written as a number")
        // V1 before the cut-over (2024-06-01), V2 from it on.
        let v1Days = members.filter { $0.1.contains("\"notification_type\"") }.map { String($0.0.prefix(10)) }
        let v2Days = members.filter { $0.1.hasPrefix("{\"signedPayload\":") }.map { String($0.0.prefix(10)) }
        #expect(!v1Days.isEmpty && v1Days.allSatisfy { $0 < "2024-06-01" })
        #expect(!v2Days.isEmpty && v2Days.allSatisfy { $0 >= "2024-06-01" })
        let v2 = members.filter { $0.1.hasPrefix("{\"signedPayload\":") }
        #expect(!v2.isEmpty)
        let trustedRoot = Fixture.read(Fixture.directory + "/apple-root.der")
        var forged = 0
        var verified = 0
        for (_, body) in v2 {
            let jws = body.split(separator: "\"")[3]
            let parts = jws.split(separator: ".")
            let header = try #require(Fixture.base64URL(parts[0]))
            let x5c = try #require((try JSONSerialization.jsonObject(with: header) as? [String: Any])?["x5c"] as? [String])
            #expect(x5c.count == 3)
            let root = Array(Data(base64Encoded: x5c[2]) ?? Data())
            if root != trustedRoot { forged += 1; continue }
            let leaf = try Certificate(derEncoded: Array(Data(base64Encoded: x5c[0]) ?? Data()))
            let key = try #require(P256.Signing.PublicKey(leaf.publicKey))
            let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Fixture.base64URL(parts[2])))
            if key.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)) { verified += 1 }
            #expect(leaf.extensions.contains { $0.oid == [1, 2, 840, 113635, 100, 6, 11, 1] })
        }
        #expect(forged >= 2, "forged notifications signed by an untrusted chain")
        #expect(verified == v2.count - forged, "every genuine V2 notification verifies")
    }

    @Test func zipJsonlAndTruncatedCopy() throws {
        let zips = Fixture.files(under: "archives/google-play")
        #expect(!zips.isEmpty)
        var texts: [String] = []
        for path in zips {
            let archive = try Archive(url: URL(fileURLWithPath: path), accessMode: .read)
            for entry in archive {
                var data = Data()
                _ = try archive.extract(entry) { data.append($0) }
                texts.append(String(decoding: data, as: UTF8.self))
            }
        }
        #expect(texts.allSatisfy { $0.hasPrefix("[") })
        #expect(texts.contains { $0.contains("androidpublisher#voidedPurchase") })
        #expect(texts.contains { $0.contains("androidpublisher#productPurchase") })
        #expect(!Fixture.files(under: "archives/backend").filter { $0.hasSuffix(".jsonl") }.isEmpty)
        let damaged = Fixture.files(under: "archives/damaged")
        #expect(damaged.count == 1)
        let cut = Fixture.gunzip(Fixture.read(damaged[0]))
        #expect(!cut.complete && cut.members >= 1)
        let original = Fixture.directory + "/archives/daily/" + ((damaged[0] as NSString).lastPathComponent)
        #expect(Fixture.gunzip(Fixture.read(original)).text.hasPrefix(cut.text))
    }
}

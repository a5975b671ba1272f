import AppStore
import Facts
import Foundation
import Ingest
import Ledger
import SubscriptionMetrics
import Pipeline
import PlayStore
import Simulator

/// Runs one ``FuzzTarget`` on inputs, with what the target needs built once (verifiers, translators).
public struct FuzzRunner: Sendable {
    public let target: FuzzTarget
    private let apple: AppStoreTranslator
    private let google: PlayStoreTranslator
    private let verifier: JWSVerifier

    /// The run's clock for the report targets: fixed, so that a saved input always gives the same outcome.
    /// 2030-01-01T00:00:00Z.
    public static let clock: Millis = 1_893_456_000_000
    /// The plausible times of a run at ``clock``.
    static let times = PlausibleTimes(now: clock)
    /// The seed whose simulated App Store chain the targets trust (`subledger simulate --seed 1` signs with it),
    /// so that signatures in seeds from the simulator verify and the fuzzer explores past verification.
    public static let simulationSeed: UInt64 = 1

    public init(_ target: FuzzTarget) throws(FuzzFailure) {
        self.target = target
        let root: [UInt8]
        do {
            root = try Simulation(seed: Self.simulationSeed).appleRootCertificate()
            apple = try AppStoreTranslator(trustedRoots: [root], bundleIds: [], times: Self.times)
            verifier = try JWSVerifier(trustedRoots: [root])
        } catch {
            throw FuzzFailure("cannot build the simulated App Store chain: \(error)")
        }
        google = PlayStoreTranslator(packageNames: [], times: Self.times)
    }

    /// Runs the target on `bytes`.
    /// - Returns: one line saying what the input gave (records, damage, the reason of a rejection), pinned by
    ///   the regression tests for saved inputs.
    /// - Throws: ``FuzzFailure`` when a property that must hold for every input does not.
    public func run(_ bytes: [UInt8]) throws(FuzzFailure) -> String {
        switch target {
        case .json: return try json(bytes)
        case .record: return try record(bytes)
        case .lines: return try archive(bytes, name: "fuzz.ndjson")
        case .document: return try archive(bytes, name: "fuzz.json")
        case .gzip: return try archive(bytes, name: "fuzz.ndjson.gz")
        case .tar: return try archive(bytes, name: "fuzz.tar")
        case .zip: return try archive(bytes, name: "fuzz.zip")
        case .jwsDecode: return jwsDecode(bytes)
        case .jwsVerify: return jwsVerify(bytes)
        case .apple: return try report(bytes, platform: .apple)
        case .google: return try report(bytes, platform: .google)
        }
    }

    // MARK: targets

    /// Parses; a value written compactly and parsed again must be the same value, and its canonical form the
    /// same bytes.
    private func json(_ bytes: [UInt8]) throws(FuzzFailure) -> String {
        let value: JSON
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            guard error.offset >= 0, error.offset <= bytes.count else {
                throw FuzzFailure("error offset \(error.offset) outside the \(bytes.count) input bytes")
            }
            return "rejected (\(error.quarantineReason.rawValue))"
        }
        let written = JSONWriter.compact(value)
        let again: JSON
        do {
            again = try JSONParser.parse(Array(written.utf8))
        } catch {
            throw FuzzFailure("the compact form does not parse: \(error)")
        }
        guard again == value else { throw FuzzFailure("the compact form parses to another value") }
        guard JSONWriter.canonical(again) == JSONWriter.canonical(value) else { throw FuzzFailure("canonical forms differ") }
        return "parsed"
    }

    /// Parses one record twice: the same outcome both times, a deduplication key when accepted.
    private func record(_ bytes: [UInt8]) throws(FuzzFailure) -> String {
        let raw = RawRecord(bytes: bytes, provenance: Provenance(file: "fuzz.ndjson", position: 1))
        let parser = RecordParser(times: Self.times)
        switch (parser.parse(raw), parser.parse(raw)) {
        case (.success(let first), .success(let second)):
            guard !first.dedupKey.isEmpty, first.dedupKey == second.dedupKey else {
                throw FuzzFailure("deduplication key empty or unstable: \(first.dedupKey) / \(second.dedupKey)")
            }
            return "accepted as \(first.source.rawValue)"
        case (.failure(let first), .failure(let second)):
            guard first == second else { throw FuzzFailure("two parses disagree: \(first) / \(second)") }
            return "rejected (\(first.reason.rawValue))"
        default:
            throw FuzzFailure("two parses of one record disagree")
        }
    }

    /// Reads the bytes as the file `name`: records are bounded, damage lies inside the input.
    private func archive(_ bytes: [UInt8], name: String) throws(FuzzFailure) -> String {
        var records = 0
        let damages: [Damage]
        do {
            damages = try ArchiveReader().read(bytes: bytes, name: name) { record in
                records += 1
                guard record.bytes.count <= ArchiveReader().maximumRecordBytes, record.provenance.file == name else {
                    throw FuzzFailure("a record of \(record.bytes.count) bytes from \(record.provenance.file)")
                }
            }
        } catch let failure as FuzzFailure {
            throw failure
        } catch {
            throw FuzzFailure("the reader threw \(error)")
        }
        for damage in damages where damage.offset < 0 || damage.offset > Int64(bytes.count) {
            throw FuzzFailure("damage at offset \(damage.offset) of \(bytes.count) bytes: \(damage.reason)")
        }
        let reasons = damages.map(\.reason).joined(separator: " | ")
        return "\(records) records, \(damages.count) damage" + (damages.isEmpty ? "" : ": " + reasons)
    }

    private func jwsDecode(_ bytes: [UInt8]) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        _ = CompactJWS.looksLikeJWS(text)
        guard let jws = CompactJWS(text) else { return "not a JWS" }
        return jws.decodeHeader() == nil ? "payload decoded, header not" : "decoded"
    }

    private func jwsVerify(_ bytes: [UInt8]) -> String {
        do {
            _ = try verifier.verify(String(decoding: bytes, as: UTF8.self), unsignedDateFallback: Self.clock)
            return "verified"
        } catch {
            return "refused: \(error)"
        }
    }

    /// One record per line, ingested as `subledger ingest` does (the real pipeline, into a new SQLite ledger in
    /// a temporary folder), then the report as `subledger report` computes it (default as-of, cut at ``clock``)
    /// rendered as CSV and JSON. Every `subscriptions_monthly` row must keep its identity, and `summary.json`
    /// must be JSON.
    private func report(_ bytes: [UInt8], platform: Platform) throws(FuzzFailure) -> String {
        let directory = NSTemporaryDirectory() + "subledger-fuzz-\(getpid())-\(platform.rawValue)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            try? FileManager.default.removeItem(atPath: directory)
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let input = directory + "/fuzz.ndjson"
            try Data(bytes).write(to: URL(fileURLWithPath: input))
            let location = LedgerLocation(directory + "/ledger.sqlite", environment: [:])
            let translator = RecordTranslator(stores: [apple, google])
            let ingest = IngestJob(ledger: location, parser: RecordParser(times: Self.times), translator: translator)
            let read = try ingest.run(inputs: [input]).statistics.read
            let zone = TimeZone(identifier: bytes.count % 2 == 0 ? "UTC" : "Asia/Tokyo") ?? .gmt
            let job = ReportJob(settings: ReportJob.Settings(now: Self.clock, timeZone: zone, formats: [.csv, .json],
                                                             outputDirectory: "", generatedBy: "fuzz"))
            let store = try location.open(.readOnly)
            let computed = Result { () throws(ReportJobError) -> ReportJob.Outcome in try job.compute(ledger: store) }
            if case .failure(.emptyLedger) = computed { return "\(read) records, no facts" }
            let outcome = try computed.get()
            for row in outcome.tables.subscriptionsMonthly {
                let identity = row.activeStart + row.new + row.reactivated + row.productChangesIn - row.productChangesOut - row.churned
                guard row.activeEnd == identity, row.activeEnd >= 0 else {
                    throw FuzzFailure("\(row.month) \(row.platform) \(row.productId): active_end \(row.activeEnd) is not \(identity)")
                }
            }
            let files = job.render(outcome)
            guard let summary = files.first(where: { $0.name == "summary.json" }) else { throw FuzzFailure("no summary.json") }
            guard (try? JSONParser.parse(Array(summary.contents.utf8))) != nil else {
                throw FuzzFailure("summary.json is not JSON")
            }
            return "\(read) records, \(outcome.tables.subscriptionsMonthly.count) monthly rows, as of \(Timestamp.rfc3339(outcome.asOf))"
        } catch let failure as FuzzFailure {
            throw failure
        } catch {
            throw FuzzFailure("the ledger failed: \(error)")
        }
    }
}

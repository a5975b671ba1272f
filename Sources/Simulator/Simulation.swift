import Foundation

/// `subledger simulate`: realistic App Store and Google Play archives for a seeded population of subscribers,
/// and `truth.json`, the metrics that population really produced (computed from the simulated timelines by
/// `TruthCalculator`, never by the pipeline).
///
/// Output in the target directory: `archives/…` (every container and payload of inputs.md), `prices.csv`,
/// `apple-root.der` (the test root for `--apple-root-ca`) and `truth.json`. One seed always gives
/// byte-identical files (keys, certificates and ES256 signatures are deterministic too).
public struct Simulation: Sendable {
    /// Number of simulated subscribers (a Google subscriber who resubscribes after expiry gets a second
    /// subscription).
    public var subscribers: Int
    /// Simulated calendar months from 2024-01-01T00:00Z.
    public var months: Int
    public var seed: UInt64

    /// Why a simulation could not be written: in words for people, and, when a file or folder could not be
    /// written, the error the system gave (the command maps it to `errno`: `ENOSPC`, the disk is full; `EACCES`,
    /// `ENOENT`, the folder named is wrong).
    public struct SimulationError: Error, CustomStringConvertible {
        public var description: String
        /// The file-system error behind a failed write; `nil` for a wrong request.
        public var underlying: (any Error)?

        init(description: String) {
            self.description = description
        }

        /// `error` while writing under `path`.
        init(writing path: String, _ error: any Error) {
            self.description = "cannot write \(path)"
            self.underlying = error
        }
    }

    /// What was written.
    public struct Summary: Sendable {
        /// Files written, relative to the output directory, sorted.
        public var files: [String]
        /// Records in the archives (what `ingest` must report as `read`).
        public var records: Int
        /// Simulated subscriptions (test and sandbox ones included).
        public var subscriptions: Int
    }

    /// A simulation of `subscribers` over `months` calendar months from 2024-01-01T00:00Z; the same `seed`
    /// always gives byte-identical files.
    public init(subscribers: Int = 1000, months: Int = 18, seed: UInt64 = 1) {
        self.subscribers = subscribers
        self.months = months
        self.seed = seed
    }

    /// 2024-01-01T00:00:00Z in ms.
    static let start: Int64 = 1_704_067_200_000

    /// The end of the last simulated month (exclusive), ms UTC.
    var end: Int64 { UTCCalendar.adding(months: months, to: Simulation.start) }

    /// The three scenarios of `truth.json`: UTC and Asia/Tokyo as of the last millisecond of the simulation,
    /// and UTC as of 10 days into month `months / 2` (0-based from January 2024).
    var scenarios: [TruthCalculator.Scenario] {
        let mid = UTCCalendar.adding(months: months / 2, to: Simulation.start) + 10 * 86_400_000
        return [
            .init(name: "utc", timeZoneIdentifier: "UTC", asOf: end - 1),
            .init(name: "tokyo", timeZoneIdentifier: "Asia/Tokyo", asOf: end - 1),
            .init(name: "mid", timeZoneIdentifier: "UTC", asOf: mid),
        ]
    }

    /// The DER root certificate the simulated App Store signs with for this seed: the `apple-root.der`
    /// ``write(to:progress:)`` saves (fuzzing harnesses trust it, so that simulated signatures verify).
    public func appleRootCertificate() throws(SimulationError) -> [UInt8] {
        do {
            return try AppleSigningChain(seed: seed, label: "Simulated Apple").root
        } catch {
            throw SimulationError(description: "cannot build the signing chain: \(error)")
        }
    }

    /// Writes the archives, `prices.csv`, `apple-root.der` and `truth.json` into `directory` (created if
    /// needed; existing `archives/` is replaced). `progress` is called now and then with subscribers done.
    @discardableResult
    public func write(to directory: String, progress: (Int) -> Void = { _ in }) throws(SimulationError) -> Summary {
        guard subscribers > 0, months > 0, months <= 120 else {
            throw SimulationError(description: "subscribers must be > 0 and months in 1...120")
        }
        let root = URL(fileURLWithPath: directory)
        let archives = root.appendingPathComponent("archives")
        let catalog = Catalog()
        let horizon = end - 60_000
        do {
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            try? FileManager.default.removeItem(at: archives)
            try FileManager.default.createDirectory(at: archives, withIntermediateDirectories: true)
        } catch {
            throw SimulationError(writing: root.path, error)
        }
        let spoolDirectory = root.appendingPathComponent(".simulate-spool")
        defer { try? FileManager.default.removeItem(at: spoolDirectory) }
        do {
            let chain = try AppleSigningChain(seed: seed, label: "Simulated Apple")
            let forgedChain = try AppleSigningChain(seed: seed, label: "Forged")
            let spool = try RecordSpool(directory: spoolDirectory)
            let appleCutover = UTCCalendar.adding(months: 5, to: Simulation.start)
            let googleCutover = UTCCalendar.adding(months: 8, to: Simulation.start)
            var emitter = RecordEmitter(
                catalog: catalog, appleCutover: appleCutover, googleCutover: googleCutover, horizon: horizon,
                chain: chain, spool: spool, seed: seed)
            let generator = SubscriberGenerator(catalog: catalog, start: Simulation.start, horizon: horizon,
                                                offerWindows: (appleFrom: appleCutover, googleBefore: googleCutover))
            var durations: [String: String] = [:]
            for product in catalog.subscriptions { durations[product.id] = product.duration }
            var calculators = scenarios.map { TruthCalculator(scenario: $0, durations: durations, monthCount: months) }
            var subscriptionCount = 0
            for index in 0..<subscribers {
                for subscription in generator.subscriber(index: index, seed: seed) {
                    subscriptionCount += 1
                    switch subscription.timeline.platform {
                    case .apple: try emitter.emitApple(subscription)
                    case .google: try emitter.emitGoogle(subscription)
                    }
                    if !subscription.isTest {
                        for i in calculators.indices { calculators[i].add(subscription.timeline) }
                    }
                }
                if index % 1000 == 999 { progress(index + 1) }
            }
            try emitNoise(into: &emitter, forgedChain: forgedChain)
            try emitter.spool.flush()

            var builder = ArchiveBuilder(archives: archives, seed: seed)
            try builder.build(from: emitter.spool)
            // The truncated copy: a daily file in the middle of the run with only used / duplicate records.
            let candidates = builder.dailyMembers.keys.sorted().filter { key in
                !emitter.specialDays.contains(where: { key.contains($0) }) && (builder.dailyMembers[key]?.count ?? 0) >= 2
            }
            if let key = candidates.isEmpty ? nil : candidates[candidates.count / 2] {
                let readable = try builder.writeTruncatedCopy(of: key)
                emitter.tally.count(.duplicate, times: readable)
                emitter.tally.damagedFiles += 1
            }

            try Data(catalog.pricesCSV.utf8).write(to: root.appendingPathComponent("prices.csv"))
            try Data(chain.root).write(to: root.appendingPathComponent("apple-root.der"))
            let truth = JSONValue.object([
                ("seed", .number(String(seed))),
                ("subscribers", .int(subscribers)),
                ("months", .int(months)),
                ("ingest", emitter.tally.json),
                ("scenarios", .array(calculators.map(Simulation.scenarioJSON))),
            ])
            try Data((truth.serialized + "\n").utf8).write(to: root.appendingPathComponent("truth.json"))
            progress(subscribers)
            return Summary(files: try Simulation.listFiles(root), records: emitter.tally.read,
                           subscriptions: subscriptionCount)
        } catch let error as SimulationError {
            throw error
        } catch {
            throw SimulationError(writing: root.path, error)
        }
    }

    /// Garbage lines, Play Console test notifications and forged V2 notifications, spread over the run.
    private func emitNoise(into emitter: inout RecordEmitter, forgedChain: AppleSigningChain) throws {
        var rng = SeededGenerator(seed: seed, stream: 0x0015E)
        let garbage = max(3, subscribers / 300)
        let span = end - Simulation.start - 86_400_000
        let instants = (0..<garbage).map { _ in SubscriberGenerator.anchor(Simulation.start + rng.int(0...span)) }
        try emitter.emitGarbage(at: instants)
        try emitter.emitTestNotifications(at: [Simulation.start + 3 * 86_400_000 + 37 * 60_000,
                                               Simulation.start + span / 2 + 11 * 60_000])
        try emitter.emitForgeries(count: max(2, subscribers / 400), forgedChain: forgedChain)
    }

    private static func scenarioJSON(_ calculator: TruthCalculator) -> JSONValue {
        .object([
            ("name", .string(calculator.scenario.name)),
            ("timezone", .string(calculator.scenario.timeZoneIdentifier)),
            ("as_of", .string(UTCCalendar.rfc3339(calculator.scenario.asOf))),
            ("tables", .object(calculator.tables().map { name, rows in
                (name, .array(rows.map { row in .object(row.map { ($0.0, .string($0.1)) }) }))
            })),
        ])
    }

    private static func listFiles(_ root: URL) throws -> [String] {
        let base = root.standardizedFileURL.path
        var files: [String] = []
        if let enumerator = FileManager.default.enumerator(atPath: base) {
            for case let path as String in enumerator {
                // The record spool (`.simulate-spool`) is still there until the run returns: not an output.
                if path.split(separator: "/").contains(where: { $0.hasPrefix(".") }) { continue }
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: base + "/" + path, isDirectory: &isDirectory), !isDirectory.boolValue {
                    files.append(path)
                }
            }
        }
        return files.sorted()
    }
}

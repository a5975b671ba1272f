import Facts
import Foundation
import Reporting
@testable import SubscriptionMetrics
import Testing

/// Sliced reports (issue 16, ledger.md "Scaling out"): engines that folded disjoint slices of the subscriptions
/// merge, directly or through partial-state files, into the state of one engine that folded them all, so the
/// tables and the CSV files are identical; and what must not merge does not.
@Suite struct SlicedReportTests {
    /// Three report configurations: plain UTC with a price list; New York (DST month boundaries) with a reporting
    /// currency and FX rates (one month missing); Tokyo with no price list (legacy prices unknown).
    static func options(seed: UInt64) throws -> ReportOptions {
        let asOf = RandomHistories.asOf
        switch seed % 3 {
        case 0:
            return ReportOptions(asOf: asOf, timeZone: try #require(TimeZone(identifier: "UTC")),
                                 prices: try PriceList(csv: RandomHistories.pricesCSV))
        case 1:
            return ReportOptions(asOf: asOf, timeZone: try #require(TimeZone(identifier: "America/New_York")),
                                 prices: try PriceList(csv: RandomHistories.pricesCSV), reportingCurrency: "USD",
                                 fxRates: try FXRates(csv: RandomHistories.fxCSV))
        default:
            return ReportOptions(asOf: asOf, timeZone: try #require(TimeZone(identifier: "Asia/Tokyo")))
        }
    }

    static func engine(_ histories: some Sequence<SubscriptionHistory>, _ options: ReportOptions) -> MetricsEngine {
        var engine = MetricsEngine(options: options)
        for history in histories { engine.add(history) }
        return engine
    }

    /// The state's bytes: equal bytes are equal states (every map is written sorted).
    static func bytes(_ engine: MetricsEngine) -> [UInt8] {
        PartialState(engine: engine, coverage: [0..<1]).encoded()
    }

    /// Byte equality, said without printing thousands of bytes when it fails: the first differing offset.
    static func same(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs != rhs else { return true }
        let offset = zip(lhs, rhs).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(lhs.count, rhs.count)
        Issue.record("bytes differ from offset \(offset) (\(lhs.count) and \(rhs.count) bytes)")
        return false
    }

    static func csv(_ tables: ReportTables) -> [String] {
        CSVReport.files(tables).map { "\($0.name)\n\($0.contents)" }
    }

    /// Merges `items` two at a time, picking both at random, until one is left: left folds, right folds and
    /// trees all happen.
    static func mergedAtRandom<Item>(_ items: [Item], random: inout SeededGenerator,
                                     _ merge: (inout Item, Item) throws -> Void) throws -> Item {
        var pool = items
        while pool.count > 1 {
            let first = pool.remove(at: Int.random(in: 0..<pool.count, using: &random))
            let second = pool.remove(at: Int.random(in: 0..<pool.count, using: &random))
            var merged = first
            try merge(&merged, second)
            pool.append(merged)
        }
        return pool[0]
    }

    /// The test of the issue: 400 random histories, split at random into K = 1, 2, 3 and 7 slices (some slices of
    /// 7 may be empty), merged in random order, in memory and through encoded partial states, give the unsliced
    /// tables, CSV files and state bytes exactly.
    @Test(arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
    func randomSlicesMergeIntoTheUnslicedReport(seed: UInt64) throws {
        let options = try Self.options(seed: seed)
        let histories = RandomHistories.make(count: 400, seed: seed)
        let whole = Self.engine(histories, options)
        let expected = whole.finish()
        let expectedCSV = Self.csv(expected)
        let wholeBytes = Self.bytes(whole)
        Self.expectVariety(expected, listed: seed % 3 != 2)
        var random = SeededGenerator(seed: seed &* 7919)
        for k in [1, 2, 3, 7] {
            var slices = [[SubscriptionHistory]](repeating: [], count: k)
            for history in histories { slices[Int.random(in: 0..<k, using: &random)].append(history) }
            let engines = slices.map { Self.engine($0.shuffled(using: &random), options) }

            let inMemory = try Self.mergedAtRandom(engines, random: &random) { try $0.merge($1) }
            let inMemoryTables = inMemory.finish()
            #expect(inMemoryTables == expected, "K = \(k), seed \(seed): merged tables differ")
            #expect(Self.csv(inMemoryTables) == expectedCSV, "K = \(k), seed \(seed): merged CSV differs")
            #expect(Self.same(Self.bytes(inMemory), wholeBytes), "K = \(k), seed \(seed): merged state differs")

            let files = engines.enumerated().map { index, engine in
                PartialState(engine: engine, context: ["ledger": "test"], coverage: [index * 10..<index * 10 + 10]).encoded()
            }
            let decoded = try files.map { try PartialState(decoding: $0) }
            let merged = try Self.mergedAtRandom(decoded, random: &random) { try $0.merge($1) }
            #expect(merged.coverage == [0..<k * 10])
            let mergedTables = merged.engine.finish()
            #expect(mergedTables == expected, "K = \(k), seed \(seed): tables merged from files differ")
            #expect(Self.csv(mergedTables) == expectedCSV)
            #expect(Self.same(Self.bytes(merged.engine), wholeBytes))
        }
    }

    /// The random histories reach what the merge has to get right: every churn reason, product changes,
    /// refunds, recoveries with a median, trials in each state, every MRR movement, early months, unpriced rows,
    /// the counts of the report's warnings; `listed`: the options carry a price list.
    static func expectVariety(_ tables: ReportTables, listed: Bool, sourceLocation: SourceLocation = #_sourceLocation) {
        let products = tables.subscriptionsMonthly.filter { $0.productId != "all" }
        #expect(products.contains { $0.productChangesIn > 0 } && products.contains { $0.churnedRefund > 0 }
                && products.contains { $0.churnedInvoluntary > 0 } && products.contains { $0.churnedVoluntary > 0 }
                && products.contains { $0.reactivated > 0 } && products.contains { $0.activeTrialsEnd > 0 },
                sourceLocation: sourceLocation)
        // Months years before the as-of time: slices extend their month tables back by different amounts.
        #expect(tables.subscriptionsMonthly.first.map { $0.month < "2022-01" } == true, sourceLocation: sourceLocation)
        #expect(tables.revenueMonthly.contains { $0.refunds.units > 0 } && tables.revenueMonthly.contains { $0.unpricedTransactions > 0 },
                sourceLocation: sourceLocation)
        #expect(tables.graceRecovery.contains { $0.recoveredInGrace > 0 } && tables.graceRecovery.contains { $0.recoveredInRetry > 1 }
                && tables.graceRecovery.contains { $0.open > 0 } && tables.graceRecovery.contains { $0.lost > 0 },
                sourceLocation: sourceLocation)
        #expect(tables.trialConversion.contains { $0.converted > 0 } && tables.trialConversion.contains { $0.abandoned > 0 }
                && tables.trialConversion.contains { $0.pending > 0 }, sourceLocation: sourceLocation)
        #expect(tables.retentionCohorts.count > 50, sourceLocation: sourceLocation)
        // The warnings' counts travel through the merge too: offers priced from the list (only with a price list)
        // periods assumed paid, and proration periods.
        #expect(listed == (tables.listPricedOffers > 0) && tables.assumedPaidPeriods > 0 && tables.prorationPeriods > 0,
                sourceLocation: sourceLocation)
        // And the tokens only notifications name, which no table holds.
        #expect(tables.notifiedOnlyTokens.contains { $0.platform == .google && $0.transactions > 0 }, sourceLocation: sourceLocation)
        #expect(tables.unplacedRefunds.contains { $0.platform == .google && $0.transactions > 0 }, sourceLocation: sourceLocation)
        let movements = tables.mrrMovements
        if tables.revenueMonthly.contains(where: { $0.mrrEnd.units > 0 }) {
            #expect(movements.contains { $0.newCount > 0 } && movements.contains { $0.expansionCount > 0 }
                    && movements.contains { $0.contractionCount > 0 } && movements.contains { $0.churnedCount > 0 }
                    && movements.contains { $0.reactivationCount > 0 }, sourceLocation: sourceLocation)
        }
    }

    /// examples.md's three subscriptions, in every assignment to at most three slices (3³ = 27): always the
    /// worked example's tables.
    @Test func workedExampleInEverySplit() throws {
        let options = ReportOptions(asOf: WorkedExampleTests.asOf, prices: try examplePrices())
        let histories = WorkedExampleTests.histories
        let expected = try tables(histories, asOf: WorkedExampleTests.asOf, prices: examplePrices())
        for assignment in 0..<27 {
            let slices = (0..<3).map { slice in histories.indices.filter { (assignment / [1, 3, 9][$0]) % 3 == slice }.map { histories[$0] } }
            var merged = MetricsEngine(options: options)
            for slice in slices.reversed() {
                let partial = try PartialState(decoding: PartialState(engine: Self.engine(slice, options), coverage: [0..<1]).encoded())
                try merged.merge(partial.engine)
            }
            #expect(merged.finish() == expected, "assignment \(assignment)")
        }
    }

    /// An empty engine is the identity of merge, on either side.
    @Test func mergingAnEmptyEngineChangesNothing() throws {
        let options = try Self.options(seed: 1)
        let full = Self.engine(RandomHistories.make(count: 200, seed: 11), options)
        var withEmpty = full
        try withEmpty.merge(MetricsEngine(options: options))
        #expect(Self.same(Self.bytes(withEmpty), Self.bytes(full)))
        #expect(withEmpty.finish() == full.finish())
        var intoEmpty = MetricsEngine(options: options)
        try intoEmpty.merge(full)
        #expect(Self.same(Self.bytes(intoEmpty), Self.bytes(full)))
        #expect(intoEmpty.finish() == full.finish())
        #expect(MetricsEngine(options: options).finish() == ReportTables(reportingCurrency: "USD"))
    }

    /// Engines of other options never merge; the error names the option and where it differs, and the engine
    /// is left as it was.
    @Test func otherOptionsAreRefusedNamingTheOption() throws {
        let base = try Self.options(seed: 1)
        let histories = RandomHistories.make(count: 50, seed: 3)
        func refusal(_ change: (inout ReportOptions) throws -> Void) throws -> MetricsMergeError? {
            var other = base
            try change(&other)
            var engine = Self.engine(histories, base)
            let before = Self.bytes(engine)
            do throws(MetricsMergeError) {
                try engine.merge(Self.engine(histories, other))
                return nil
            } catch {
                #expect(Self.same(Self.bytes(engine), before), "a refused merge changed the engine")
                return error
            }
        }
        #expect(try refusal { $0.asOf += 1 } == MetricsMergeError(
            option: "--as-of", detail: "2024-06-15T12:00:00.000Z here, 2024-06-15T12:00:00.001Z in the other"))
        #expect(try refusal { $0.timeZone = try #require(TimeZone(identifier: "Europe/Paris")) } == MetricsMergeError(
            option: "--timezone", detail: "America/New_York here, Europe/Paris in the other"))
        #expect(try refusal { $0.prices = try PriceList(csv: RandomHistories.pricesCSV.replacingOccurrences(of: "apple,pro_monthly,USD,9.99", with: "apple,pro_monthly,USD,10.5")) }
                == MetricsMergeError(option: "--prices", detail: "apple pro_monthly USD: 9.99 here, 10.5 in the other"))
        #expect(try refusal { $0.prices = try PriceList(csv: RandomHistories.pricesCSV.replacingOccurrences(of: "google,pro_yearly,USD,39.99,P1Y", with: "google,pro_yearly,USD,39.99,P12M")) }
                == MetricsMergeError(option: "--prices", detail: "google pro_yearly: P1Y here, P12M in the other"))
        #expect(try refusal { $0.prices = .empty }
                == MetricsMergeError(option: "--prices", detail: "apple basic_monthly EUR: 4.49 here, no price in the other"))
        #expect(try refusal { $0.reportingCurrency = "EUR" } == MetricsMergeError(
            option: "--currency", detail: "USD here, EUR in the other"))
        #expect(try refusal { $0.fxRates = try FXRates(csv: RandomHistories.fxCSV.replacingOccurrences(of: "2023-03,EUR,1.03", with: "2023-03,EUR,1.04")) }
                == MetricsMergeError(option: "--fx-rates", detail: "EUR in 2023-03: 1.03 here, 1.04 in the other"))
        #expect(try refusal { $0.fxRates = nil } == MetricsMergeError(option: "--fx-rates", detail: "a file here, none in the other"))
        #expect(try refusal { _ in } == nil)
        // The same rates written with other trailing zeros are the same rates.
        #expect(try refusal { $0.fxRates = try FXRates(csv: RandomHistories.fxCSV.replacingOccurrences(of: "0.0067", with: "0.006700")) } == nil)
        var rewritten = base
        rewritten.fxRates = try FXRates(csv: RandomHistories.fxCSV.replacingOccurrences(of: "0.0067", with: "0.006700"))
        #expect(Self.same(Self.bytes(MetricsEngine(options: rewritten)), Self.bytes(MetricsEngine(options: base))))
        #expect(try refusal { $0.asOf += 1 }?.description
                == "computed with another --as-of: 2024-06-15T12:00:00.000Z here, 2024-06-15T12:00:00.001Z in the other")
    }

    /// Partials of another ledger (context) or of slices another partial covers are refused, unchanged.
    @Test func partialsOfAnotherContextOrOverlappingSlicesAreRefused() throws {
        let options = try Self.options(seed: 0)
        let engine = Self.engine(RandomHistories.make(count: 30, seed: 5), options)
        var first = PartialState(engine: engine, context: ["ledger": "L1", "rules_version": "7"], coverage: [0..<256, 512..<768])
        let before = first.encoded()
        #expect(throws: PartialStateError.contextDiffers(key: "ledger", ours: "L1", theirs: "L2")) {
            try first.merge(PartialState(engine: engine, context: ["ledger": "L2", "rules_version": "7"], coverage: [256..<512]))
        }
        #expect(throws: PartialStateError.contextDiffers(key: "rules_version", ours: "7", theirs: nil)) {
            try first.merge(PartialState(engine: engine, context: ["ledger": "L1"], coverage: [256..<512]))
        }
        #expect(throws: PartialStateError.overlappingCoverage(700..<768)) {
            try first.merge(PartialState(engine: engine, context: ["ledger": "L1", "rules_version": "7"], coverage: [700..<800]))
        }
        var otherOptions = options
        otherOptions.reportingCurrency = "EUR"
        #expect(throws: PartialStateError.options(MetricsMergeError(option: "--currency", detail: "none here, EUR in the other"))) {
            try first.merge(PartialState(engine: MetricsEngine(options: otherOptions), context: ["ledger": "L1", "rules_version": "7"],
                                         coverage: [256..<512]))
        }
        #expect(Self.same(first.encoded(), before))
        try first.merge(PartialState(engine: engine, context: ["ledger": "L1", "rules_version": "7"], coverage: [256..<512, 768..<1024]))
        #expect(first.coverage == [0..<1024])
        #expect(PartialStateError.overlappingCoverage(700..<768).description
                == "covers slices 700..<768 that another partial covers too")
    }

    /// Encode → decode → encode gives the same bytes, the decoded state the same tables; folding the same
    /// histories in another order gives the same bytes; and the format stays compact.
    @Test(arguments: [0, 1, 2] as [UInt64])
    func encodingIsByteStable(seed: UInt64) throws {
        let options = try Self.options(seed: seed)
        let histories = RandomHistories.make(count: 400, seed: seed + 100)
        let engine = Self.engine(histories, options)
        let partial = PartialState(engine: engine, context: ["ledger": "a", "rules_version": "3"], coverage: [3..<4, 0..<2, 2..<3])
        let bytes = partial.encoded()
        let decoded = try PartialState(decoding: bytes)
        #expect(Self.same(decoded.encoded(), bytes))
        #expect(decoded.context == ["ledger": "a", "rules_version": "3"])
        #expect(decoded.coverage == [0..<4])
        #expect(decoded.engine.finish() == engine.finish())
        #expect(decoded.engine.options.difference(from: options) == nil)
        var random = SeededGenerator(seed: seed)
        let shuffled = PartialState(engine: Self.engine(histories.shuffled(using: &random), options),
                                    context: ["rules_version": "3", "ledger": "a"], coverage: [0..<4])
        #expect(Self.same(shuffled.encoded(), bytes))
        #expect(bytes.count < 40_000, "400 subscriptions took \(bytes.count) bytes")
    }

    /// Recovery times are all kept, sorted and delta-encoded: 50,000 recoveries spread over 60 days take under
    /// 3 bytes each (a million would take about 2), and the median over the merged rows is the median of all of them.
    @Test func recoveryTimesAreKeptCompactly() throws {
        let options = ReportOptions(asOf: utc(2024, 7, 1))
        var random = SeededGenerator(seed: 42)
        var slices = [MetricsEngine(options: options), MetricsEngine(options: options)]
        var all: [Millis] = []
        for number in 0..<100_000 {
            let failed = utc(2024, 3, 1) + Millis.random(in: 0..<(30 * day), using: &random)
            let recovery = Millis.random(in: 1..<(60 * day), using: &random)
            all.append(recovery)
            slices[number % 2].add(SubscriptionHistory(platform: .google, id: "g\(number)", periods: [
                paid("GPA.\(number)", "monthly", failed - 30 * day, failed, reason: .billingIssue),
                paid("GPA.\(number)..0", "monthly", failed + recovery, failed + recovery + 30 * day),
            ], episodes: [BillingEpisode(failedAt: failed, graceEnd: failed, outcome: .recovered(at: failed + recovery))]))
        }
        let size = Self.bytes(slices[1]).count
        #expect(size < 50_000 * 3 + 2_000, "50,000 recoveries took \(size) bytes")
        var merged = try PartialState(decoding: PartialState(engine: slices[0], coverage: [0..<1]).encoded()).engine
        try merged.merge(PartialState(decoding: PartialState(engine: slices[1], coverage: [1..<2]).encoded()).engine)
        let sorted = all.sorted()
        let median = Double(sorted[49_999] + sorted[50_000]) / 2 / 3_600_000
        #expect(merged.finish().graceRecovery.map(\.medianHoursToRecover) == [median])
    }

    /// What is not a partial state, another version, or a damaged one is refused with the reason, never a crash:
    /// every truncation, every single flipped byte, and, under a valid checksum, every truncated body and a
    /// value out of range.
    @Test func damagedPartialsAreRefused() throws {
        let options = try Self.options(seed: 0)
        let bytes = PartialState(engine: Self.engine(RandomHistories.make(count: 20, seed: 9), options), coverage: [0..<1]).encoded()
        let magic = Array("subledger partial state\n".utf8)
        #expect(throws: PartialStateError.notAPartialState) { try PartialState(decoding: Array("month,platform\n".utf8)) }
        #expect(throws: PartialStateError.notAPartialState) { try PartialState(decoding: []) }
        var later = bytes
        later[magic.count] = UInt8(PartialState.formatVersion + 1)
        #expect(throws: PartialStateError.unsupportedVersion(PartialState.formatVersion + 1)) { try PartialState(decoding: later) }
        #expect(PartialStateError.unsupportedVersion(1).description
                == "is a partial state of format 1, this subledger reads format 6: compute the slices again with this release")
        for length in magic.count..<bytes.count {
            #expect(throws: PartialStateError.self) { try PartialState(decoding: Array(bytes.prefix(length))) }
        }
        for index in (magic.count + 1)..<bytes.count {
            var flipped = bytes
            flipped[index] ^= 0x10
            #expect(throws: PartialStateError.damaged("its checksum does not match")) { try PartialState(decoding: flipped) }
        }
        // The reader checks every value, not only the checksum: each truncated body, checksummed again.
        for length in (magic.count + 1)..<(bytes.count - 8) {
            let truncated = Self.withChecksum(Array(bytes.prefix(length)))
            #expect(throws: PartialStateError.damaged("it ends early")) { try PartialState(decoding: truncated) }
        }
        // A month outside the report under a valid checksum: the body of an empty engine, its first month moved
        // after the as-of month.
        var writer = PartialWriter()
        writer.raw(magic)
        writer.count(PartialState.formatVersion)
        writer.count(0)
        writer.count(0)
        options.encode(to: &writer)
        writer.int(2030 * 12)
        #expect(throws: PartialStateError.damaged("first month 2030-01 is outside the months a report can have")) {
            try PartialState(decoding: Self.withChecksum(writer.bytes))
        }
    }

    /// FNV-1a 64 of `body`, appended little endian, as ``PartialState`` writes it.
    static func withChecksum(_ body: [UInt8]) -> [UInt8] {
        let checksum = body.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01B3 }
        return body + (0..<8).map { UInt8(truncatingIfNeeded: checksum >> UInt64($0 * 8)) }
    }
}

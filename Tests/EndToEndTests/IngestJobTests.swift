import Facts
import Foundation
import Ingest
import Ledger
import Pipeline
@testable import Simulator
import Testing

@Suite struct IngestJobTests {
    private func job(_ database: String) throws -> IngestJob {
        IngestJob(ledger: .sqlite(path: database), parser: RecordParser(times: IngestFixtures.times),
                  translator: try IngestFixtures.translator(), progress: .none)
    }

    private func digest(_ database: String) throws -> String {
        try SQLiteLedger(path: database, access: .readOnly).contentDigest()
    }

    @Test func everyRecordEndsInExactlyOnePlace() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("play.ndjson")
        try IngestFixtures.write(IngestFixtures.lines(0..<1000), to: input)
        let statistics = try job(directory.file("l.sqlite")).run(inputs: [input]).statistics
        #expect(statistics.files == 1)
        #expect(statistics.read == 2101)
        #expect(statistics.used == 2000)
        #expect(statistics.excluded == 100)
        #expect(statistics.excludedByReason == ["sandbox": 100])
        #expect(statistics.quarantined == 1)
        #expect(statistics.quarantinedByReason == ["malformed_json": 1])
        #expect(statistics.duplicate == 0)
        #expect(statistics.firstEventAt == IngestFixtures.march2024)
        let status = try SQLiteLedger(path: directory.file("l.sqlite"), access: .readOnly).statistics()
        #expect(status.read == 2101)
        #expect(status.used == 2000)
        #expect(status.files == 1)
    }

    @Test func reIngestOfAnUnchangedFileIsSkipped() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("play.ndjson")
        try IngestFixtures.write(IngestFixtures.lines(0..<50), to: input)
        let database = directory.file("l.sqlite")
        _ = try job(database).run(inputs: [input]).statistics
        let before = try digest(database)
        let again = try job(database).run(inputs: [InputPath(input)])
        #expect(again.unchanged == [input])
        #expect(again.statistics == IngestStatistics().withEveryWarning())
        #expect(try digest(database) == before)
    }

    @Test func theSameRecordInTwoFilesIsStoredOnce() throws {
        let directory = try TemporaryDirectory()
        let lines = IngestFixtures.lines(0..<20)
        try IngestFixtures.write(lines, to: directory.file("a.ndjson"))
        try IngestFixtures.write(Array(lines.reversed()), to: directory.file("b.jsonl"))
        let database = directory.file("l.sqlite")
        let statistics = try job(database).run(inputs: [directory.path]).statistics
        #expect(statistics.files == 2)
        #expect(statistics.read == 84)
        #expect(statistics.used == 40)
        #expect(statistics.excluded == 2)
        #expect(statistics.duplicate == 42)
        let ledger = try SQLiteLedger(path: database, access: .readOnly)
        #expect(try ledger.statistics().used == 40)
        var subscriptions = 0
        try ledger.forEachSubscription(buckets: 0...LedgerBucket.count - 1) { _, _, _ in subscriptions += 1 }
        #expect(subscriptions == 20)
    }

    @Test func aChangedFileAddsOnlyItsNewRecords() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("play.ndjson")
        let database = directory.file("l.sqlite")
        try IngestFixtures.write(IngestFixtures.lines(0..<30), to: input)
        let first = try job(database).run(inputs: [input]).statistics
        #expect(first.used == 60)
        try IngestFixtures.append(IngestFixtures.lines(30..<40), to: input)
        let second = try job(database).run(inputs: [input]).statistics
        #expect(second.read == 63 + 21)
        #expect(second.duplicate == 63)
        #expect(second.used == 20)
        #expect(second.excluded == 1)
        let status = try SQLiteLedger(path: database, access: .readOnly).statistics()
        #expect(status.read == 84)
        #expect(status.used == 80)
        #expect(status.duplicate == 0)
        // The same content ingested in one go gives the same ledger.
        let fresh = directory.file("fresh.sqlite")
        _ = try job(fresh).run(inputs: [input]).statistics
        #expect(try digest(fresh) == digest(database))
    }

    /// A log overwritten under the same path (rotated, or rewritten by its backend) is read again: what its earlier
    /// content quarantined stays, the only copy of those records, for `reprocess --quarantined` to release.
    @Test func anOverwrittenFileKeepsWhatItsEarlierContentQuarantined() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("play.ndjson")
        let database = directory.file("l.sqlite")
        try IngestFixtures.write(IngestFixtures.lines(990..<1000), to: input)
        let first = try job(database).run(inputs: [input]).statistics
        #expect(first.quarantinedByReason == ["malformed_json": 1])
        try IngestFixtures.write(IngestFixtures.lines(0..<10), to: input)
        _ = try job(database).run(inputs: [input]).statistics
        let status = try SQLiteLedger(path: database, access: .readOnly).statistics()
        #expect(status.quarantined == 1)
        #expect(status.used == 40)
    }

    /// A log read while its last line was being written: the cut line is quarantined; read again once the line
    /// is complete (and more appended), the record replaces that entry, so the ledger is the one a single read of
    /// the finished log gives and `status` counts every line once.
    @Test func aCutLastLineCompletedSinceLeavesTheQuarantine() throws {
        let directory = try TemporaryDirectory()
        try Self.completeACutLastLine(in: directory, ledger: .sqlite(path: directory.file("l.sqlite")),
                                      fresh: .sqlite(path: directory.file("fresh.sqlite")))
    }

    /// ``aCutLastLineCompletedSinceLeavesTheQuarantine()`` on any engine: `fresh` is an empty ledger of the same.
    static func completeACutLastLine(in directory: TemporaryDirectory, ledger: LedgerLocation,
                                     fresh: LedgerLocation) throws {
        func job(_ location: LedgerLocation) throws -> IngestJob {
            IngestJob(ledger: location, parser: RecordParser(times: IngestFixtures.times),
                      translator: try IngestFixtures.translator(), progress: .none)
        }
        let input = directory.file("play.ndjson")
        let lines = IngestFixtures.lines(0..<12)
        let complete = Data((lines.joined(separator: "\n") + "\n").utf8)
        let last = lines[..<25].joined(separator: "\n").utf8.count
        // The 25th line cut after 40 of its bytes.
        try complete.prefix(last - lines[24].utf8.count + 40).write(to: URL(fileURLWithPath: input))
        let first = try job(ledger).run(inputs: [input]).statistics
        #expect(first.read == 25)
        #expect(first.quarantinedByReason == ["malformed_json": 1])
        try complete.write(to: URL(fileURLWithPath: input))
        let second = try job(ledger).run(inputs: [input]).statistics
        #expect(second.read == lines.count)
        #expect(second.quarantined == 0)
        let status = try ledger.open(.readOnly).statistics()
        #expect(status.quarantined == 0)
        #expect(status.read == lines.count)
        #expect(status.duplicate == 0)
        _ = try job(fresh).run(inputs: [input])
        #expect(try fresh.open(.readOnly).contentDigest() == ledger.open(.readOnly).contentDigest())
        // Content rewritten under the same path keeps the entry, though its line of that number begins with the
        // same bytes (tokens 1000-1011 are logged at the same times as 0-11): it does not continue what was read.
        let rotated = directory.file("rotated.ndjson")
        try complete.prefix(last - lines[24].utf8.count + 41).write(to: URL(fileURLWithPath: rotated))
        _ = try job(ledger).run(inputs: [rotated])
        try IngestFixtures.write(IngestFixtures.lines(1000..<1012), to: rotated)
        let rewritten = try job(ledger).run(inputs: [rotated]).statistics
        #expect(rewritten.read == lines.count)
        #expect(try ledger.open(.readOnly).statistics().quarantined == 1)
    }

    /// Each payload keeps the dictionary it was compressed with: after a first run of a few records, whose
    /// dictionary is small, a run with many more trains a better one, which the payloads it writes use.
    @Test func aLargerRunTrainsABetterDictionaryThanATinyFirstOne() throws {
        let directory = try TemporaryDirectory()
        let database = directory.file("l.sqlite")
        try IngestFixtures.write(IngestFixtures.lines(0..<20), to: directory.file("small.ndjson"))
        try IngestFixtures.write(IngestFixtures.lines(20..<2000), to: directory.file("large.ndjson"))
        _ = try job(database).run(inputs: [directory.file("small.ndjson")])
        let small = try SQLiteLedger(path: database, access: .readOnly).payloadDictionaries()
        #expect(small.count == 1)
        _ = try job(database).run(inputs: [directory.file("large.ndjson")])
        let both = try SQLiteLedger(path: database, access: .readOnly).payloadDictionaries()
        #expect(both.count == 2)
        #expect(both.map(\.bytes.count).last ?? 0 > 4 * (small.first?.bytes.count ?? .max))
        // A third run keeps the full one.
        try IngestFixtures.write(IngestFixtures.lines(2000..<4000), to: directory.file("more.ndjson"))
        _ = try job(database).run(inputs: [directory.file("more.ndjson")])
        #expect(try SQLiteLedger(path: database, access: .readOnly).payloadDictionaries().count == 2)
    }

    @Test func twoOrdersOfTheSameInputsGiveEqualLedgers() throws {
        let directory = try TemporaryDirectory()
        let files = ["1.ndjson", "2.ndjson", "3.ndjson"].map(directory.file)
        try IngestFixtures.write(IngestFixtures.lines(0..<40), to: files[0])
        try IngestFixtures.write(IngestFixtures.lines(20..<60), to: files[1])
        try IngestFixtures.write(IngestFixtures.lines(50..<70) + IngestFixtures.lines(0..<5), to: files[2])
        let forward = directory.file("forward.sqlite")
        let backward = directory.file("backward.sqlite")
        for file in files { _ = try job(forward).run(inputs: [file]).statistics }
        for file in files.reversed() { _ = try job(backward).run(inputs: [file]).statistics }
        #expect(try digest(forward) == digest(backward))
        let a = try SQLiteLedger(path: forward, access: .readOnly).statistics()
        let b = try SQLiteLedger(path: backward, access: .readOnly).statistics()
        #expect(a == b)
        #expect(a.used == 140)
    }

    @Test func aMissingInputIsAnInputError() throws {
        let directory = try TemporaryDirectory()
        #expect {
            try job(directory.file("l.sqlite")).run(inputs: [directory.file("missing.ndjson")]).statistics
        } throws: { error in
            guard case .input(let message) = error as? IngestError else { return false }
            return message.contains("missing.ndjson")
        }
    }

    @Test func aTruncatedGzipKeepsTheRecordsBeforeTheDamageAndReportsIt() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("cut.ndjson.gz")
        // gzip of stored (uncompressed) deflate blocks, one block per five tokens (complete lines), cut inside the
        // third block: as a log shipper's file looks when the copy was interrupted.
        var gzip: [UInt8] = [0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xff]
        for block in 0..<3 {
            let text = Array((IngestFixtures.lines(block * 5..<block * 5 + 5).joined(separator: "\n") + "\n").utf8)
            let length = UInt16(text.count)
            gzip += [block == 2 ? 0x01 : 0x00, UInt8(length & 0xff), UInt8(length >> 8),
                     UInt8(~length & 0xff), UInt8(~length >> 8)]
            gzip += block == 2 ? Array(text.prefix(text.count / 2)) : text
        }
        try Data(gzip).write(to: URL(fileURLWithPath: input))
        let database = directory.file("l.sqlite")
        let statistics = try job(database).run(inputs: [input]).statistics
        #expect(statistics.damagedFiles.count == 1)
        #expect(statistics.damagedFiles.first?.file == input)
        #expect(statistics.used >= 20)
        #expect(statistics.read == statistics.used + statistics.duplicate + statistics.excluded + statistics.quarantined)
        let status = try SQLiteLedger(path: database, access: .readOnly).statistics()
        #expect(status.damagedFiles.map(\.file) == [input])
        #expect(try SQLiteLedger(path: database, access: .readOnly).files().first?.state == .done)
    }

    /// A tar with eight cut gzip members: the ledger keeps one damage per file, so `status` (read the next morning,
    /// when the run's own output is gone) says the first, names the next five with their offsets and counts the
    /// rest.
    @Test func everyDamageOfAFileIsSaidInTheLedger() throws {
        let directory = try TemporaryDirectory()
        func cutGzip(_ lines: Range<Int>) -> [UInt8] {
            let text = Array((IngestFixtures.lines(lines).joined(separator: "\n") + "\n").utf8)
            let length = UInt16(text.count)
            return [0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xff, 0x01, UInt8(length & 0xff), UInt8(length >> 8),
                    UInt8(~length & 0xff), UInt8(~length >> 8)] + Array(text.prefix(text.count / 2))
        }
        var tar = TarWriter()
        for member in 0..<8 {
            tar.add(name: "\(member).ndjson.gz", contents: cutGzip(member * 2..<member * 2 + 2), modified: 1_709_294_400)
        }
        tar.add(name: "fine.ndjson", contents: Array((IngestFixtures.lines(16..<18).joined(separator: "\n") + "\n").utf8),
                modified: 1_709_294_400)
        let input = directory.file("day.tar")
        try Data(tar.finished).write(to: URL(fileURLWithPath: input))
        let database = directory.file("l.sqlite")
        let damages = try job(database).run(inputs: [input]).statistics.damagedFiles
        #expect(damages.count == 8)
        let status = try SQLiteLedger(path: database, access: .readOnly).statistics()
        let kept = try #require(status.damagedFiles.first)
        #expect(status.damagedFiles.count == 1 && kept.offset == damages[0].offset)
        let named = damages[1...5].map { "; and at byte \($0.offset): \($0.reason)" }.joined()
        #expect(kept.reason == damages[0].reason + named + "; and 2 more (`subledger ingest` lists them all)", "\(kept.reason)")
    }
}

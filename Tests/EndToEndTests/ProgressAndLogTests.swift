import Facts
import Foundation
import Logging
@testable import Pipeline
import Simulator
import Synchronization
import Testing

/// What `subledger` says on stderr while it works (issue 15, item 11): progress with percent of bytes, rate and
/// ETA; on a terminal a live line, in a log one timestamped `key=value` record at most every 10 s; levels
/// through swift-log (`--log-level`, `--quiet`).
@Suite struct ProgressAndLogTests {
    /// Lines a handler or a live line wrote, collected across threads.
    final class Lines: Sendable {
        private let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    /// A clock the test moves by hand.
    final class FakeClock: Sendable {
        private let instant = Mutex(ContinuousClock.now)
        var now: ContinuousClock.Instant { instant.withLock { $0 } }
        func advance(_ duration: Duration) { instant.withLock { $0 = $0.advanced(by: duration) } }
    }

    static func logger(_ lines: Lines, structured: Bool, level: Logger.Level = .info) -> Logger {
        var logger = Logger(label: "test") { _ in
            StandardErrorLogHandler(level: level, structured: structured, write: { lines.append($0) }, now: { 1_717_199_999_999 })
        }
        logger[metadataKey: "command"] = "report"
        return logger
    }

    /// logfmt for logs: time, level, message, then the metadata sorted by key; values quoted only when they must
    /// be, so a log shipper splits every line the same way. For people: sentences.
    @Test func logLinesAreKeyValueForLogsAndSentencesForPeople() {
        let structured = Lines()
        let log = Self.logger(structured, structured: true)
        log.warning("12 transactions had no known price", metadata: ["unpriced_transactions": "12", "products": "apple/a b"])
        log.info("progress", metadata: ["percent": "45.0"])
        log.error("a \"quoted\" path\\n\nsecond line")
        log.debug("not at info level")
        #expect(structured.all == [
            "ts=2024-05-31T23:59:59.999Z level=warning msg=\"12 transactions had no known price\" command=report products=\"apple/a b\" unpriced_transactions=12\n",
            "ts=2024-05-31T23:59:59.999Z level=info msg=progress command=report percent=45.0\n",
            "ts=2024-05-31T23:59:59.999Z level=error msg=\"a \\\"quoted\\\" path\\\\n\\nsecond line\" command=report\n",
        ])
        let people = Lines()
        let terminal = Self.logger(people, structured: false, level: .debug)
        terminal.info("ingest: 3 files")
        terminal.warning("skipped b.ndjson: already ingested as a.ndjson")
        terminal.error("l.sqlite: the ledger is read-only")
        terminal.debug("failure detail", metadata: ["detail": "while running SELECT 1"])
        #expect(people.all == ["ingest: 3 files\n", "warning: skipped b.ndjson: already ingested as a.ndjson\n",
                               "subledger: l.sqlite: the ledger is read-only\n",
                               "debug: failure detail command=report detail=\"while running SELECT 1\"\n"])
    }

    /// Piped (a log), progress is one record at most every 10 s, never before 10 s have passed, and a `done`
    /// record with the final figures; on a terminal a live line rewritten in place, cleared at the end.
    @Test func progressIsRateLimitedInLogsAndLiveOnATerminal() {
        let clock = FakeClock()
        let records = Lines()
        let logged = ProgressLine(output: ProgressOutput(logger: Self.logger(records, structured: true), showsProgress: true, isTerminal: false),
                                  writeLive: { _ in Issue.record("no live line in a log") }, now: { clock.now })
        let figures = ProgressFigures(text: "ingest: 1 file", fields: [("command", "ingest"), ("files_done", "1")])
        for step in 0..<25 {
            logged.show(figures)
            clock.advance(.seconds(1))
            _ = step
        }
        #expect(records.all.count == 2, "at 10 s and 20 s: \(records.all)")
        #expect(records.all.allSatisfy { $0.hasPrefix("ts=2024-05-31T23:59:59.999Z level=info msg=progress command=ingest files_done=1") })
        logged.done(figures)
        #expect(records.all.last?.contains("level=info msg=done") == true)

        let live = Lines()
        let terminal = ProgressLine(output: ProgressOutput(logger: nil, showsProgress: true, isTerminal: true),
                                    writeLive: { live.append($0) }, now: { clock.now })
        terminal.show(figures)
        clock.advance(.milliseconds(250))
        terminal.show(figures)
        terminal.done(figures)
        #expect(live.all == ["\r\u{1B}[Kingest: 1 file", "\r\u{1B}[K"])

        let quiet = ProgressLine(output: ProgressOutput(logger: Self.logger(records, structured: true), showsProgress: false, isTerminal: false),
                                 now: { clock.now })
        let before = records.all.count
        clock.advance(.seconds(60))
        quiet.show(figures)
        quiet.done(figures)
        #expect(records.all.count == before, "--quiet: no progress at all")
    }

    /// The figures: percent of the input bytes, files, records, records per second and the time left.
    @Test func ingestFiguresHavePercentRateAndETA() {
        let figures = ProgressReporter.figures(label: "ingest", rate: ProgressRate(elapsed: 20), filesDone: 120, filesTotal: 300,
                                               bytesDone: 450_000_000, bytesTotal: 1_200_000_000, records: 364_000)
        #expect(figures.text == "ingest: 37.5% of 1.2 GB, 120/300 files, 364000 records, 18200 records/s, ETA 0:34")
        #expect(figures.fields.map { "\($0.key)=\($0.value)" } == [
            "command=ingest", "percent=37.5", "bytes_done=450000000", "bytes_total=1200000000", "files_done=120", "files_total=300",
            "records=364000", "records_per_second=18200", "eta_seconds=34",
        ])
        let unknown = ProgressReporter.figures(label: "reprocess", rate: ProgressRate(elapsed: 0), filesDone: 0, filesTotal: 0,
                                               bytesDone: 0, bytesTotal: 0, records: 10)
        #expect(unknown.text == "reprocess: 10 records", "no total, no percent or ETA")
        #expect(ProgressRate.clock(3725) == "1:02:05" && ProgressRate.clock(42) == "0:42")
        #expect(ProgressRate(elapsed: 5).secondsLeft(100, of: 100) == nil, "nothing left once done")
    }

    /// Through the real binary, as a nightly job runs it (stderr to a file): every stderr line is a logfmt
    /// record with a time; the ingest ends with a `done` record of its figures; `--quiet` keeps only warnings;
    /// `--log-level debug` adds a failure's technical detail, which the default level never shows.
    @Test func aNightlyJobsStderrIsStructured() throws {
        let workspace = try TemporaryDirectory()
        try IngestFixtures.write(IngestFixtures.lines(0..<300), to: workspace.file("a.ndjson"))
        try IngestFixtures.write(IngestFixtures.lines(300..<600), to: workspace.file("b.ndjson"))
        let ingest = try SubledgerProcess.run(["ingest", "--db", "l.sqlite", "a.ndjson", "b.ndjson"], in: workspace, tag: "ingest")
        #expect(ingest.status == 0, "\(ingest.stderr)")
        let lines = ingest.stderr.split(separator: "\n")
        #expect(!lines.isEmpty && lines.allSatisfy { $0.hasPrefix("ts=") && $0.contains(" level=") && $0.contains(" command=ingest") }, "\(ingest.stderr)")
        let done = try #require(lines.last { $0.contains("msg=done") })
        let sizes = try ["a.ndjson", "b.ndjson"].map { try FileManager.default.attributesOfItem(atPath: workspace.file($0))[.size] as? Int ?? 0 }
        let size = sizes.reduce(0, +)
        for field in ["percent=100.0", "files_done=2", "files_total=2", "bytes_done=\(size)", "bytes_total=\(size)", "records=1260"] {
            #expect(done.contains(" \(field)"), "\(field) in \(done)")
        }
        #expect(done.contains(" records_per_second="))

        let copy = try SubledgerProcess.run(["ingest", "--db", "l.sqlite", "--quiet", "a.ndjson"], in: workspace, tag: "quiet")
        #expect(copy.status == 0)
        #expect(copy.stderr.isEmpty, "--quiet: nothing but warnings and errors: \(copy.stderr)")
        #expect(copy.stdout.contains("1 skipped (unchanged)"), "the summary stays on stdout")

        try Data("not a ledger".utf8).write(to: URL(fileURLWithPath: workspace.file("text.sqlite")))
        let plain = try SubledgerProcess.run(["status", "--db", "text.sqlite"], in: workspace, tag: "plain")
        #expect(plain.status == 2)
        #expect(plain.stderr.contains("level=error msg=\"text.sqlite: not a subledger ledger"), "\(plain.stderr)")
        #expect(plain.stderr.contains("exit_code=2"))
        #expect(!plain.stderr.contains("SELECT"), "no SQL at the default level")
        let debug = try SubledgerProcess.run(["status", "--db", "text.sqlite", "--log-level", "debug"], in: workspace, tag: "debug")
        #expect(debug.stderr.contains("level=debug msg=\"failure detail\""), "\(debug.stderr)")
        #expect(debug.stderr.contains("file is not a database"), "the engine's words are kept for debugging: \(debug.stderr)")
    }

    /// `simulate` shows its total (subscribers done of all), and says how many files it wrote: those on disk,
    /// not its scratch files.
    @Test func simulateShowsItsTotalAndTheFilesItWrote() throws {
        let workspace = try TemporaryDirectory()
        let result = try SubledgerProcess.run(["simulate", "--out", "sim", "--subscribers", "40", "--months", "3", "--seed", "2"],
                                              in: workspace, tag: "simulate")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("msg=done command=simulate") && result.stderr.contains("subscribers_done=40 subscribers_total=40"),
                "\(result.stderr)")
        var files = 0
        let enumerator = FileManager.default.enumerator(atPath: workspace.file("sim"))
        while let path = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: workspace.file("sim/" + path), isDirectory: &isDirectory), !isDirectory.boolValue { files += 1 }
        }
        #expect(result.stdout.hasPrefix("wrote \(files) files, "), "\(result.stdout) for \(files) files on disk")
    }
}

import Foundation
import Logging
import Synchronization

/// Where a run tells what it is doing: progress, and notes such as "reprocessing first".
///
/// Progress is a live line rewritten in place when stderr is a terminal; otherwise (a nightly job's log) one
/// `info` record `progress` with the figures as metadata, at most every ``ProgressLine/loggedInterval``. Notes
/// are `notice` records of ``logger``.
public struct ProgressOutput: Sendable {
    /// Where notes and logged progress go; `nil`: nowhere.
    public var logger: Logger?
    /// Whether progress is shown at all (`--quiet` turns it off).
    public var showsProgress: Bool
    /// Whether stderr is a terminal (a live line) rather than a log (records at most every 10 s).
    public var isTerminal: Bool

    public init(logger: Logger?, showsProgress: Bool, isTerminal: Bool = isatty(STDERR_FILENO) == 1) {
        self.logger = logger
        self.showsProgress = showsProgress
        self.isTerminal = isTerminal
    }

    /// No output at all (tests, library use).
    public static let none = ProgressOutput(logger: nil, showsProgress: false, isTerminal: false)

    /// Notes and progress through `logger`, to stderr.
    public static func standardError(_ logger: Logger, showsProgress: Bool = true) -> ProgressOutput {
        ProgressOutput(logger: logger, showsProgress: showsProgress)
    }

    /// One note about what the run is doing (a `notice` record).
    func say(_ text: String) {
        logger?.notice("\(text)")
    }
}

/// A progress report: one sentence for the live line, and the same figures as `key=value` fields for logs.
public struct ProgressFigures: Sendable {
    public var text: String
    public var fields: [(key: String, value: String)]

    public init(text: String, fields: [(key: String, value: String)]) {
        self.text = text
        self.fields = fields
    }
}

/// One line of progress on stderr, as cli.md asks: a live line rewritten in place on a terminal (every 200 ms at
/// most), and otherwise a timestamped log record at most every 10 s, so that a nightly job's log holds a few
/// lines, not thousands. Shared by `ingest`, `reprocess`, `report` and `simulate`; safe to call from any thread.
public final class ProgressLine: Sendable {
    private struct State {
        var last: ContinuousClock.Instant
        var live = false
    }

    /// How often a log (stderr not a terminal) gets a progress record at most.
    public static let loggedInterval: Duration = .seconds(10)
    /// How often the live line is rewritten at most.
    public static let liveInterval: Duration = .milliseconds(200)

    private let output: ProgressOutput
    private let interval: Duration
    private let now: @Sendable () -> ContinuousClock.Instant
    private let state: Mutex<State>
    /// Where the live line is written (stderr; a test collects it).
    private let writeLive: @Sendable (String) -> Void

    /// A line for `output`; `writeLive` and `now` are stderr and the clock, replaced by tests.
    public init(output: ProgressOutput,
                writeLive: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data($0.utf8)) },
                now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }) {
        self.output = output
        self.writeLive = writeLive
        self.now = now
        interval = output.isTerminal ? Self.liveInterval : Self.loggedInterval
        state = Mutex(State(last: now()))
    }

    /// Shows the figures when the interval has passed since the last line (or since the start): the figures are
    /// only computed then.
    public func show(_ figures: @autoclosure () -> ProgressFigures) {
        guard output.showsProgress else { return }
        state.withLock { state in
            let time = now()
            guard time - state.last >= interval else { return }
            state.last = time
            let figures = figures()
            if output.isTerminal {
                writeLive("\r\u{1B}[K\(figures.text)")
                state.live = true
            } else {
                var metadata: Logger.Metadata = [:]
                for field in figures.fields { metadata[field.key] = .string(field.value) }
                output.logger?.info("progress", metadata: metadata)
            }
        }
    }

    /// Ends the run's progress: clears the live line on a terminal; in a log, one `info` record `done` with the
    /// final figures (a nightly job's log keeps what the run did, as fields).
    public func done(_ figures: ProgressFigures) {
        finish()
        guard output.showsProgress, !output.isTerminal else { return }
        var metadata: Logger.Metadata = [:]
        for field in figures.fields { metadata[field.key] = .string(field.value) }
        output.logger?.info("done", metadata: metadata)
    }

    /// Clears the live line, so that what follows starts on a fresh line.
    public func finish() {
        state.withLock { state in
            guard state.live else { return }
            writeLive("\r\u{1B}[K")
            state.live = false
        }
    }
}

/// Figures of a run that moves through a known amount of work: done of total (percent), the rate per second
/// and the time left at that rate. Pure arithmetic, so the live line and the logs say the same.
public struct ProgressRate: Sendable, Hashable {
    /// Seconds since the run started.
    public var elapsed: Double

    public init(elapsed: Double) {
        self.elapsed = elapsed
    }

    /// The figures of a run that started at `started`.
    public init(since started: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - started
        self.init(elapsed: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    /// `done / total` in percent with one decimal (`45.0`), `nil` when the total is unknown (0).
    public func percent(_ done: Int64, of total: Int64) -> String? {
        guard total > 0 else { return nil }
        return String(format: "%.1f", min(100, Double(done) * 100 / Double(total)))
    }

    /// Things per second, rounded to a whole number; `nil` before any time has passed.
    public func perSecond(_ count: Int) -> Int? {
        guard elapsed > 0 else { return nil }
        return Int((Double(count) / elapsed).rounded())
    }

    /// Seconds left at the rate so far, rounded up; `nil` until some of a known total is done, and once all is.
    public func secondsLeft(_ done: Int64, of total: Int64) -> Int? {
        guard total > 0, done > 0, done < total, elapsed > 0 else { return nil }
        return Int((elapsed * Double(max(0, total - done)) / Double(done)).rounded(.up))
    }

    /// `0:42`, `12:05`, `1:02:03`.
    public static func clock(_ seconds: Int) -> String {
        let s = max(0, seconds)
        let (h, m, r) = (s / 3600, s / 60 % 60, s % 60)
        let two = { (n: Int) in n < 10 ? "0\(n)" : "\(n)" }
        return h > 0 ? "\(h):\(two(m)):\(two(r))" : "\(m):\(two(r))"
    }

    /// `850 kB`, `12.3 MB`, `1.2 GB` (decimal units).
    public static func bytes(_ count: Int64) -> String {
        let value = Double(count)
        if value >= 1e9 { return String(format: "%.1f GB", value / 1e9) }
        if value >= 1e6 { return String(format: "%.1f MB", value / 1e6) }
        return String(format: "%.0f kB", value / 1e3)
    }
}

/// Progress of one ingest or reprocess run: files and input bytes done of their totals, records read, the rate
/// and the time left. Input bytes are the files' own sizes (compressed), counted when a file is done (read,
/// skipped as unchanged or as a copy, or unreadable). Called from the store thread only.
struct ProgressReporter {
    private let line: ProgressLine
    /// What the run is doing: `ingest` or `reprocess`.
    private let label: String
    private let started = ContinuousClock.now

    var filesTotal = 0
    var filesDone = 0
    /// Sizes of the input files (bytes, as stored), of all and of those done.
    var bytesTotal: Int64 = 0
    var bytesDone: Int64 = 0
    var records = 0

    init(output: ProgressOutput, label: String) {
        line = ProgressLine(output: output)
        self.label = label
    }

    /// Counts one file as done.
    mutating func fileDone(size: Int64) {
        filesDone += 1
        bytesDone += size
    }

    /// Shows the figures when the line's interval has passed.
    func tick() {
        line.show(figures)
    }

    /// The figures now, as the live line and the log say them.
    var figures: ProgressFigures {
        Self.figures(label: label, rate: ProgressRate(since: started), filesDone: filesDone, filesTotal: filesTotal, bytesDone: bytesDone,
                            bytesTotal: bytesTotal, records: records)
    }

    static func figures(label: String, rate: ProgressRate, filesDone: Int, filesTotal: Int, bytesDone: Int64,
                        bytesTotal: Int64, records: Int) -> ProgressFigures {
        var parts: [String] = []
        var fields: [(key: String, value: String)] = [("command", label)]
        if let percent = rate.percent(bytesDone, of: bytesTotal) {
            parts.append("\(percent)% of \(ProgressRate.bytes(bytesTotal))")
            fields += [("percent", percent), ("bytes_done", String(bytesDone)), ("bytes_total", String(bytesTotal))]
        }
        if filesTotal > 0 {
            parts.append("\(filesDone)/\(filesTotal) files")
            fields += [("files_done", String(filesDone)), ("files_total", String(filesTotal))]
        }
        parts.append("\(records) records")
        fields.append(("records", String(records)))
        if let perSecond = rate.perSecond(records) {
            parts.append("\(perSecond) records/s")
            fields.append(("records_per_second", String(perSecond)))
        }
        if let left = rate.secondsLeft(bytesDone, of: bytesTotal) {
            parts.append("ETA \(ProgressRate.clock(left))")
            fields.append(("eta_seconds", String(left)))
        }
        return ProgressFigures(text: "\(label): " + parts.joined(separator: ", "), fields: fields)
    }

    /// Ends the live line so that the summary starts on a fresh line; in a log, the final figures.
    func finish() {
        line.done(figures)
    }

    /// Clears the live line of a run that failed, so that the error starts on a fresh line.
    func abandon() {
        line.finish()
    }
}

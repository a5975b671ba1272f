import Foundation

/// Where ingest progress goes.
public enum ProgressOutput: Sendable {
    /// No progress output (tests, library use).
    case none
    /// Standard error: a live line rewritten with `\r` on a terminal, else one line every 5 seconds (logs).
    case standardError
}

/// Progress of one ingest run: files done of total, records read, megabytes of record text read.
/// Called from the store thread only.
struct ProgressReporter {
    private let output: ProgressOutput
    private let isTerminal: Bool
    private let interval: Duration
    private let clock = ContinuousClock()
    private var lastLine: ContinuousClock.Instant
    private var wroteLiveLine = false

    var filesTotal = 0
    var filesDone = 0
    var records = 0
    /// Bytes of the records read so far (uncompressed JSON text).
    var bytes: Int64 = 0

    init(output: ProgressOutput) {
        self.output = output
        isTerminal = isatty(STDERR_FILENO) == 1
        interval = isTerminal ? .milliseconds(200) : .seconds(5)
        lastLine = clock.now
    }

    /// Writes a line when the interval has passed since the last one.
    mutating func tick() {
        guard output == .standardError, clock.now - lastLine >= interval else { return }
        lastLine = clock.now
        let text = "ingest: \(filesDone)/\(filesTotal) files, \(records) records, "
            + String(format: "%.1f MB", Double(bytes) / 1_000_000)
        if isTerminal {
            FileHandle.standardError.write(Data("\r\u{1B}[K\(text)".utf8))
            wroteLiveLine = true
        } else {
            FileHandle.standardError.write(Data("\(text)\n".utf8))
        }
    }

    /// Ends the live line so that the summary starts on a fresh line.
    mutating func finish() {
        guard output == .standardError, wroteLiveLine else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        wroteLiveLine = false
    }
}

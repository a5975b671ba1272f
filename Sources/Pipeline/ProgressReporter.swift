import Foundation
import Synchronization

/// Where progress goes.
public enum ProgressOutput: Sendable {
    /// No progress output (tests, library use).
    case none
    /// Standard error: a live line rewritten with `\r` on a terminal, else one line every 5 seconds (logs).
    case standardError
}

/// One line of progress on stderr, as cli.md asks: a live line rewritten in place on a terminal (every 200 ms at
/// most), periodic lines otherwise (every 5 s, for logs). Shared by `ingest`, `report` and `simulate`; safe to
/// call from any thread.
public final class ProgressLine: Sendable {
    private struct State {
        var last: ContinuousClock.Instant
        var live = false
    }

    private let enabled: Bool
    private let isTerminal: Bool
    private let interval: Duration
    private let clock = ContinuousClock()
    private let state: Mutex<State>

    public init(output: ProgressOutput) {
        enabled = output == .standardError
        isTerminal = isatty(STDERR_FILENO) == 1
        interval = isTerminal ? .milliseconds(200) : .seconds(5)
        state = Mutex(State(last: clock.now))
    }

    /// Shows `text` when the interval has passed since the last line (`text` is only built then).
    public func show(_ text: @autoclosure () -> String) {
        guard enabled else { return }
        state.withLock { state in
            guard clock.now - state.last >= interval else { return }
            state.last = clock.now
            if isTerminal {
                FileHandle.standardError.write(Data("\r\u{1B}[K\(text())".utf8))
                state.live = true
            } else {
                FileHandle.standardError.write(Data("\(text())\n".utf8))
            }
        }
    }

    /// Clears the live line, so that what follows starts on a fresh line.
    public func finish() {
        guard enabled else { return }
        state.withLock { state in
            guard state.live else { return }
            FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
            state.live = false
        }
    }
}

/// Progress of one ingest or reprocess run: files done of total, records read, megabytes of record text read.
/// Called from the store thread only.
struct ProgressReporter {
    private let line: ProgressLine
    /// What the run is doing: `ingest` or `reprocess`.
    private let label: String

    var filesTotal = 0
    var filesDone = 0
    var records = 0
    /// Bytes of the records read so far (uncompressed JSON text).
    var bytes: Int64 = 0

    init(output: ProgressOutput, label: String) {
        line = ProgressLine(output: output)
        self.label = label
    }

    /// Shows the counts when the line's interval has passed.
    func tick() {
        line.show("\(label): \(filesDone)/\(filesTotal) files, \(records) records, "
            + String(format: "%.1f MB", Double(bytes) / 1_000_000))
    }

    /// Ends the live line so that the summary starts on a fresh line.
    func finish() {
        line.finish()
    }
}

import Facts
import Foundation
import Logging

/// The CLI's swift-log handler: one line per record on stderr, in one of two forms.
///
/// - **Structured** (stderr is not a terminal: a nightly job, a log shipper): logfmt,
///   `ts=2025-07-01T02:00:13.120Z level=warning msg="..." command=report unpriced_transactions=12`: the time in
///   UTC with milliseconds, the level, the message, then the metadata (the logger's, then the record's) sorted by
///   key. Values are quoted when they hold a space, `=` or `"`, or are empty; `"`, `\` and line breaks are
///   escaped, so every record is one line.
/// - **For people** (a terminal): the message alone for `info` and `notice`, `warning: ` before warnings,
///   `subledger: ` before errors; `debug`/`trace` records add their metadata (the technical detail).
public struct StandardErrorLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    /// logfmt (`true`) or sentences for people.
    public let structured: Bool
    private let write: @Sendable (String) -> Void
    private let now: @Sendable () -> Millis

    /// A handler at `level`; `structured` by default when stderr is not a terminal. `write` receives each line
    /// with its newline (stderr by default), `now` gives the record's time (ms, UTC).
    public init(level: Logger.Level, structured: Bool = isatty(STDERR_FILENO) != 1,
                write: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data($0.utf8)) },
                now: @escaping @Sendable () -> Millis = { Millis((Date().timeIntervalSince1970 * 1000).rounded(.down)) }) {
        logLevel = level
        self.structured = structured
        self.write = write
        self.now = now
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let own = event.metadata { merged.merge(own) { _, new in new } }
        write(line(level: event.level, message: event.message.description, metadata: merged) + "\n")
    }

    /// The line of one record, without its newline.
    func line(level: Logger.Level, message: String, metadata: Logger.Metadata) -> String {
        let fields = metadata.sorted { $0.key < $1.key }.map { ($0.key, $0.value.description) }
        guard structured else {
            switch level {
            case .trace, .debug:
                return "debug: " + message + fields.map { " \($0.0)=" + Self.quoted($0.1) }.joined()
            case .info, .notice: return message
            case .warning: return "warning: " + message
            case .error, .critical: return "subledger: " + message
            }
        }
        var out = "ts=" + Timestamp.rfc3339(now()) + " level=" + level.rawValue + " msg=" + Self.quoted(message)
        for (key, value) in fields { out += " " + key + "=" + Self.quoted(value) }
        return out
    }

    /// A logfmt value: bare when it is one plain word, else in double quotes with `"`, `\` and line breaks
    /// escaped.
    static func quoted(_ value: String) -> String {
        let plain = !value.isEmpty && !value.contains { $0 == " " || $0 == "=" || $0 == "\"" || $0 == "\\" || $0.isNewline || $0 == "\t" }
        guard !plain else { return value }
        var out = "\""
        for character in value {
            switch character {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\t": out += "\\t"
            case _ where character.isNewline: out += "\\n"
            default: out.append(character)
            }
        }
        return out + "\""
    }
}

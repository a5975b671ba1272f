/// A configuration file (`--prices`, `--fx-rates`) that cannot be used: which file, which line, what is wrong.
/// The CLI turns it into exit code 2.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What kind of file: `prices` or `fx-rates`.
    public var file: String
    /// 1-based line number of the offending row (1 is the header).
    public var line: Int
    /// What is wrong, for a human.
    public var reason: String

    public init(file: String, line: Int, reason: String) {
        self.file = file
        self.line = line
        self.reason = reason
    }

    public var description: String { "\(file), line \(line): \(reason)" }
}

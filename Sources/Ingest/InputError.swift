/// An input the user named that cannot be turned into files to read. Fatal for the command (the CLI exits 2):
/// a typo in a path must not look like an archive with no records.
public struct InputError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The path or glob pattern as the user gave it.
    public var input: String
    public var reason: String

    public init(input: String, reason: String) {
        self.input = input
        self.reason = reason
    }

    public var description: String { "\(input): \(reason)" }
}

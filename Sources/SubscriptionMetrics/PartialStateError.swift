/// Why a partial-state file cannot be read or merged. The descriptions name no file: the caller says which one.
public enum PartialStateError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The bytes do not start like a partial-state file.
    case notAPartialState
    /// Written in another format version than ``PartialState/formatVersion``.
    case unsupportedVersion(Int)
    /// Starts like a partial-state file but does not decode (truncated, checksum mismatch, a value out of range).
    case damaged(String)
    /// A context value (e.g. the ledger or the rules version) differs between two partials.
    case contextDiffers(key: String, ours: String?, theirs: String?)
    /// Two partials both cover these slices (half-open range), so merging them would count subscriptions twice.
    case overlappingCoverage(Range<Int>)
    /// The two states were computed with different report options.
    case options(MetricsMergeError)

    public var description: String {
        switch self {
        case .notAPartialState:
            return "is not a subledger partial-state file (write one with `report --shard K/N --partial FILE`)"
        case .unsupportedVersion(let version):
            return "is a partial state of format \(version), this subledger reads format \(PartialState.formatVersion):"
                + " compute the slices again with this release"
        case .damaged(let reason):
            return "is damaged (\(reason)): compute that slice again"
        case .contextDiffers(let key, let ours, let theirs):
            // A long value (the statistics of an ingest, as JSON) is not worth quoting: the key says what differs.
            guard (ours ?? "").count <= 80, (theirs ?? "").count <= 80 else {
                return "comes from another \(key) (the ledger changed between the slices, or they read two ledgers): "
                    + "compute every slice again from one ledger with no ingest running"
            }
            return "comes from another \(key) (\(theirs ?? "none") where the others have \(ours ?? "none"))"
        case .overlappingCoverage(let range):
            return "covers slices \(range.lowerBound)..<\(range.upperBound) that another partial covers too"
        case .options(let error):
            return "was \(error.description)"
        }
    }
}

/// The mergeable state of a report over one slice of the subscriptions, as the file `report --shard K/N
/// --partial FILE` writes and `report --merge` reads (`cli.md`).
///
/// It holds the ``MetricsEngine`` (options included, price list and FX rates in full), a ``context`` that every
/// partial of one report must share (the caller's: subledger puts the ledger identity and the rules version
/// there) and the ``coverage``, the slices it was computed over (subledger: bucket numbers). Merging refuses
/// other options, another context and overlapping coverage, so a merge never adds a subscription twice or mixes
/// reports.
///
/// The bytes: the line `subledger partial state`, the format version (``formatVersion``) as a varint, the body
/// (context, coverage, options, months, then each table's sums; integers as LEB128 varints, every map written
/// in sorted order), and an FNV-1a 64-bit checksum of everything before it (little endian). The same state
/// always gives the same bytes.
///
/// ```swift
/// let slice = PartialState(engine: engine, context: ["ledger": id, "rules_version": "7"], coverage: [256..<512])
/// try write(slice.encoded())
/// var merged = try PartialState(decoding: bytesOfFirst)
/// try merged.merge(PartialState(decoding: bytesOfSecond))
/// let tables = merged.engine.finish()
/// ```
public struct PartialState: Sendable {
    /// The format this release writes and reads. Raised whenever the bytes or the meaning of a state change
    /// (a new table or column, another sum), so that partials of other releases are refused, never misread.
    public static let formatVersion = 6

    /// The metrics folded so far, with their options.
    public var engine: MetricsEngine
    /// Values every merged partial must have the same (name → value), e.g. the ledger and the rules version.
    public var context: [String: String]
    /// The slices covered, as half-open ranges in the caller's numbering: sorted, not empty, neither overlapping
    /// nor touching (touching ranges are joined).
    public private(set) var coverage: [Range<Int>]

    /// A partial of `engine`'s state over `coverage` (normalized: sorted, empty ranges dropped, overlapping or
    /// touching ranges joined).
    public init(engine: MetricsEngine, context: [String: String] = [:], coverage: [Range<Int>]) {
        self.engine = engine
        self.context = context
        self.coverage = Self.normalized(coverage)
    }

    private static let magic = Array("subledger partial state\n".utf8)

    /// The file's bytes.
    public func encoded() -> [UInt8] {
        var writer = PartialWriter()
        writer.raw(Self.magic)
        writer.count(Self.formatVersion)
        writer.count(context.count)
        for key in context.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            writer.string(key)
            writer.string(context[key] ?? "")
        }
        writer.count(coverage.count)
        for range in coverage {
            writer.int(range.lowerBound)
            writer.int(range.upperBound)
        }
        engine.encode(to: &writer)
        var bytes = writer.bytes
        let checksum = Self.checksum(bytes[...])
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: checksum >> UInt64(shift))) }
        return bytes
    }

    /// Reads a partial-state file. Throws ``PartialStateError/notAPartialState`` for other files,
    /// ``PartialStateError/unsupportedVersion(_:)`` for another format version, and
    /// ``PartialStateError/damaged(_:)`` for anything else that does not decode (checksum, truncation, values).
    public init(decoding bytes: [UInt8]) throws(PartialStateError) {
        guard bytes.starts(with: Self.magic) else { throw .notAPartialState }
        var header = PartialReader(bytes, range: Self.magic.count..<bytes.count)
        let version = try header.unsigned()
        guard version == UInt64(Self.formatVersion) else { throw .unsupportedVersion(Int(clamping: version)) }
        guard bytes.count >= Self.magic.count + 1 + 8 else { throw .damaged("it ends early") }
        let bodyEnd = bytes.count - 8
        let stored = bytes[bodyEnd...].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        guard stored == Self.checksum(bytes[..<bodyEnd]) else { throw .damaged("its checksum does not match") }

        var reader = PartialReader(bytes, range: Self.magic.count..<bodyEnd)
        _ = try reader.unsigned()
        var context: [String: String] = [:]
        for _ in 0..<(try reader.count()) {
            let key = try reader.string()
            guard context.updateValue(try reader.string(), forKey: key) == nil else { throw .damaged("context `\(key)` is repeated") }
        }
        var coverage: [Range<Int>] = []
        for _ in 0..<(try reader.count()) {
            let (lower, upper) = (try reader.int(), try reader.int())
            guard lower < upper else { throw .damaged("an empty or reversed slice range") }
            coverage.append(lower..<upper)
        }
        guard Self.normalized(coverage) == coverage else { throw .damaged("slice ranges out of order") }
        let engine = try MetricsEngine(from: &reader)
        guard reader.isAtEnd else { throw .damaged("unexpected bytes after the state") }
        self.init(engine: engine, context: context, coverage: coverage)
    }

    /// Adds `other` (another slice of the same report) to this one: the engines merge, the coverage is the union.
    /// Throws, changing nothing, when a context value or an option differs or when the coverages overlap.
    public mutating func merge(_ other: PartialState) throws(PartialStateError) {
        // The shorter values first (the ledger's id before the statistics of its ingest): the difference named
        // is the one that says most, and reads in a line.
        let keys = Set(context.keys).union(other.context.keys).sorted {
            ((context[$0] ?? "").count, $0) < ((context[$1] ?? "").count, $1)
        }
        for key in keys where context[key] != other.context[key] {
            throw .contextDiffers(key: key, ours: context[key], theirs: other.context[key])
        }
        for ours in coverage {
            for theirs in other.coverage where ours.overlaps(theirs) {
                throw .overlappingCoverage(ours.clamped(to: theirs))
            }
        }
        do throws(MetricsMergeError) {
            try engine.merge(other.engine)
        } catch {
            throw .options(error)
        }
        coverage = Self.normalized(coverage + other.coverage)
    }

    /// Sorted, non-empty ranges with overlapping or touching ones joined.
    private static func normalized(_ ranges: [Range<Int>]) -> [Range<Int>] {
        var joined: [Range<Int>] = []
        for range in ranges.filter({ !$0.isEmpty }).sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = joined.last, range.lowerBound <= last.upperBound {
                joined[joined.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                joined.append(range)
            }
        }
        return joined
    }

    /// FNV-1a, 64 bits: catches a truncated or altered file (it is no defence against a forged one).
    private static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01B3 }
    }
}

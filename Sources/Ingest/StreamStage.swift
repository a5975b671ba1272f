/// One layer of the push pipeline that turns a file's bytes into records: a gzip inflater, a tar reader or a
/// record splitter, or the recogniser that picks one of them (``SniffingStage``). The file reader (or
/// ``ZipReader``, for zip members) pushes chunks in order; each stage hands its output to the stage below it,
/// and record splitters hand records to `emit`.
///
/// Pushing rather than pulling lets an inflater hand each output chunk on as zlib produces it, and a tar reader
/// switch members mid-chunk, with no stage holding more than its own state.
///
/// Contract: ``write(_:origin:damages:emit:)`` is called for every chunk in order, then ``finish(origin:damages:emit:)``
/// once when the input ended cleanly. When the input is cut off (damage upstream), `finish` is *not* called, so a
/// half record is never yielded as if it were whole. A stage that cannot go on throws ``StageDamage``; damage it
/// can recover from (one bad tar member) it appends to `damages` and continues.
protocol StreamStage {
    mutating func write(_ chunk: UnsafeRawBufferPointer, origin: ChunkOrigin, damages: inout [Damage],
                        emit: (RawRecord) throws -> Void) throws
    mutating func finish(origin: ChunkOrigin, damages: inout [Damage], emit: (RawRecord) throws -> Void) throws
}

/// Where a chunk's bytes lie in the input file, for damage offsets.
///
/// A chunk read straight from the file (or a plain tar member of it) maps byte for byte (`linear`); a chunk
/// of decompressed bytes does not, and then ``offset`` is the compressed position it was produced at.
struct ChunkOrigin: Sendable, Hashable {
    /// Byte offset in the input file of the chunk's first byte (or of the compressed data that produced it).
    var offset: Int64
    /// Whether byte `i` of the chunk is byte `offset + i` of the file.
    var linear: Bool

    /// The file offset of byte `delta` of the chunk, as precisely as it is known.
    func offset(at delta: Int) -> Int64 { linear ? offset + Int64(delta) : offset }
}

/// A stage cannot continue: the rest of its input is lost. `offset` is a file offset (see ``ChunkOrigin``).
struct StageDamage: Error, Sendable {
    var offset: Int64
    var reason: String
}

/// An error thrown by the caller's record sink, carried through the stages untouched so that no stage mistakes
/// it for damage; ``ArchiveReader`` rethrows the original error.
struct SinkFailure: Error {
    var underlying: any Error
}

/// Bounds shared by the stages.
enum StreamLimits {
    /// Bytes read from a file (and inflated) per step: large enough to amortise calls, small enough to stay in cache.
    static let chunkSize = 256 * 1024
    /// Longest record kept whole. A longer one is yielded cut at this length, so that it is quarantined as
    /// malformed rather than buffered without bound. The largest store records (a receipt of years of renewals, a
    /// Pub/Sub pull of 1,000 messages) take about a megabyte; several records of this length are in flight at
    /// once (the reader's, each worker's, the store's queue), so it bounds the ingest's memory.
    static let maximumRecordBytes = 16 * 1024 * 1024
}

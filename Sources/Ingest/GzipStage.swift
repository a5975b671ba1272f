import SystemZlib

/// Inflates gzip (RFC 1952) through the system zlib and pushes the bytes to the stage below.
///
/// Several gzip members one after another, as log shippers append them, are one stream: at the end of a
/// member with input left, the inflater is reset and goes on. Damage offsets are compressed byte offsets.
struct GzipStage: StreamStage {
    private let inflater: Inflater
    private var inner: any StreamStage
    /// Name for messages: the file or member being inflated.
    private let label: String
    /// The last member ended exactly at a chunk boundary; the next input byte starts a new member.
    private var atMemberEnd = false
    /// Compressed bytes received, for the message of an empty stream.
    private var received: Int64 = 0

    init(inner: any StreamStage, label: String) throws(StageDamage) {
        self.inflater = try Inflater(windowBits: 15 + 16)
        self.inner = inner
        self.label = label
    }

    mutating func write(_ chunk: UnsafeRawBufferPointer, origin: ChunkOrigin, damages: inout [Damage],
                        emit: (RawRecord) throws -> Void) throws {
        received += Int64(chunk.count)
        let inflater = self.inflater
        var index = 0
        while index < chunk.count {
            if atMemberEnd {
                inflater.reset()
                atMemberEnd = false
            }
            let start = index
            let result: (consumed: Int, ended: Bool)
            do {
                result = try inflater.inflate(UnsafeRawBufferPointer(rebasing: chunk[start...])) { output, consumedBefore in
                    try inner.write(output, origin: ChunkOrigin(offset: origin.offset(at: start + consumedBefore), linear: false),
                                    damages: &damages, emit: emit)
                }
            } catch let failure as InflateFailure {
                throw StageDamage(offset: origin.offset(at: start + failure.consumed),
                                  reason: "corrupt gzip data in \(label): \(failure.message)")
            }
            index += result.consumed
            if result.ended {
                atMemberEnd = true
            } else if result.consumed == 0 {
                return
            }
        }
    }

    mutating func finish(origin: ChunkOrigin, damages: inout [Damage], emit: (RawRecord) throws -> Void) throws {
        guard received > 0 else {
            throw StageDamage(offset: origin.offset, reason: "\(label) is empty, not a gzip stream")
        }
        guard atMemberEnd else {
            throw StageDamage(offset: origin.offset, reason: "gzip stream of \(label) cut off (truncated)")
        }
        try inner.finish(origin: ChunkOrigin(offset: origin.offset, linear: false), damages: &damages, emit: emit)
    }
}

/// Owns a zlib inflate state and its output buffer. A class because zlib keeps a pointer back to its
/// `z_stream`, so the stream must not move, and `inflateEnd` must run exactly once.
final class Inflater {
    static let outputSize = StreamLimits.chunkSize
    private let stream: UnsafeMutablePointer<z_stream>
    private let output: UnsafeMutablePointer<Bytef>

    /// - Parameter windowBits: `15 + 16` for gzip (RFC 1952), `-15` for the raw deflate of zip members.
    init(windowBits: Int32) throws(StageDamage) {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = inflateInit2_(stream, windowBits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else {
            stream.deallocate()
            throw StageDamage(offset: 0, reason: "zlib could not start (status \(status))")
        }
        self.stream = stream
        self.output = .allocate(capacity: Self.outputSize)
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
        output.deallocate()
    }

    /// Starts a new stream (the next gzip member, the next zip entry).
    func reset() {
        inflateReset(stream)
    }

    /// Inflates `input` until it is all consumed or the deflate stream ends, handing each output chunk to
    /// `deliver` with the number of input bytes consumed before the call that produced it.
    /// - Returns: input bytes consumed, and whether the stream ended (bytes after its end are not consumed).
    /// - Throws: ``InflateFailure`` on corrupt data; an error from `deliver` as is.
    func inflate(_ input: UnsafeRawBufferPointer,
                 deliver: (_ output: UnsafeRawBufferPointer, _ consumedBefore: Int) throws -> Void) throws -> (consumed: Int, ended: Bool) {
        guard let base = input.baseAddress, input.count > 0 else { return (0, false) }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        defer {
            stream.pointee.next_in = nil
            stream.pointee.avail_in = 0
        }
        while true {
            let consumedBefore = input.count - Int(stream.pointee.avail_in)
            stream.pointee.next_out = output
            stream.pointee.avail_out = uInt(Self.outputSize)
            let status = SystemZlib.inflate(stream, Z_NO_FLUSH)
            let produced = Self.outputSize - Int(stream.pointee.avail_out)
            let consumed = input.count - Int(stream.pointee.avail_in)
            if produced > 0 { try deliver(UnsafeRawBufferPointer(start: output, count: produced), consumedBefore) }
            switch status {
            case Z_STREAM_END:
                return (consumed, true)
            case Z_OK, Z_BUF_ERROR:
                // Done once the input is consumed and zlib holds no more output for us.
                if stream.pointee.avail_in == 0 && stream.pointee.avail_out > 0 { return (consumed, false) }
                if produced == 0 && consumed == consumedBefore { return (consumed, false) }
            default:
                let message = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(status)"
                throw InflateFailure(consumed: consumed, message: message)
            }
        }
    }
}

/// Corrupt deflate data, `consumed` input bytes into the call.
struct InflateFailure: Error {
    var consumed: Int
    var message: String
}

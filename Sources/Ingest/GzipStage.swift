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
        self.inflater = try Inflater()
        self.inner = inner
        self.label = label
    }

    mutating func write(_ chunk: UnsafeRawBufferPointer, origin: ChunkOrigin, damages: inout [Damage],
                        emit: (RawRecord) throws -> Void) throws {
        guard let base = chunk.baseAddress, chunk.count > 0 else { return }
        received += Int64(chunk.count)
        let stream = inflater.stream
        stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(chunk.count)
        defer {
            stream.pointee.next_in = nil
            stream.pointee.avail_in = 0
        }
        while true {
            if atMemberEnd {
                guard stream.pointee.avail_in > 0 else { return }
                inflateReset(stream)
                atMemberEnd = false
            }
            let consumedBefore = chunk.count - Int(stream.pointee.avail_in)
            stream.pointee.next_out = inflater.output
            stream.pointee.avail_out = uInt(Inflater.outputSize)
            let status = inflate(stream, Z_NO_FLUSH)
            let produced = Inflater.outputSize - Int(stream.pointee.avail_out)
            let consumed = chunk.count - Int(stream.pointee.avail_in)
            if produced > 0 {
                try inner.write(UnsafeRawBufferPointer(start: inflater.output, count: produced),
                                origin: ChunkOrigin(offset: origin.offset(at: consumedBefore), linear: false),
                                damages: &damages, emit: emit)
            }
            switch status {
            case Z_STREAM_END:
                atMemberEnd = true
            case Z_OK, Z_BUF_ERROR:
                // Done with this chunk once it is consumed and zlib holds no more output for us.
                if stream.pointee.avail_in == 0 && stream.pointee.avail_out > 0 { return }
                if produced == 0 && consumed == consumedBefore { return }
            default:
                let message = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(status)"
                throw StageDamage(offset: origin.offset(at: consumed), reason: "corrupt gzip data in \(label): \(message)")
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
    let stream: UnsafeMutablePointer<z_stream>
    let output: UnsafeMutablePointer<Bytef>

    init() throws(StageDamage) {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // windowBits 15 + 16: a gzip wrapper, not zlib's own.
        let status = inflateInit2_(stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
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
}

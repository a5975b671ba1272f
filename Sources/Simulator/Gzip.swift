import SystemZlib

/// gzip members written with the system zlib (`deflateInit2` with window bits 31 = gzip wrapper).
enum Gzip {
    /// Errors from zlib while compressing.
    struct CompressionError: Error, CustomStringConvertible {
        var code: Int32
        var description: String { "zlib deflate failed with code \(code)" }
    }

    /// One complete gzip member holding `bytes`. Concatenating members gives a multi-member gzip stream.
    static func member(_ bytes: [UInt8]) throws(CompressionError) -> [UInt8] {
        var stream = z_stream()
        var status = deflateInit2_(&stream, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY, zlibVersion(),
                                   Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { throw CompressionError(code: status) }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, UInt(bytes.count))) + 64
        var output = [UInt8](repeating: 0, count: bound)
        var input = bytes
        let produced: Int = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                stream.next_in = inBuffer.baseAddress
                stream.avail_in = UInt32(inBuffer.count)
                stream.next_out = outBuffer.baseAddress
                stream.avail_out = UInt32(outBuffer.count)
                status = deflate(&stream, Z_FINISH)
                return outBuffer.count - Int(stream.avail_out)
            }
        }
        guard status == Z_STREAM_END else { throw CompressionError(code: status) }
        return Array(output.prefix(produced))
    }
}

import Foundation

/// Random access to the bytes of one input: what a zip needs (its directory is at the end).
protocol ByteSource {
    /// Size in bytes.
    var size: Int64 { get }
    /// Reads up to `buffer.count` bytes at `offset`; 0 at the end.
    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(StageDamage) -> Int
}

extension ByteSource {
    /// Exactly `count` bytes at `offset`, or `nil` when the source ends before them.
    func bytes(at offset: Int64, count: Int) throws(StageDamage) -> [UInt8]? {
        guard offset >= 0, count >= 0, offset <= size, Int64(count) <= size - offset else { return nil }
        var result = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let got: Result<Int, StageDamage> = result.withUnsafeMutableBytes { buffer in
                do throws(StageDamage) {
                    return .success(try read(at: offset + Int64(filled), into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...])))
                } catch {
                    return .failure(error)
                }
            }
            let copied = try got.get()
            guard copied > 0 else { return nil }
            filled += copied
        }
        return result
    }
}

/// An open file, read with `pread(2)`; the descriptor belongs to the caller.
struct FileByteSource: ByteSource {
    let descriptor: Int32
    let size: Int64

    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(StageDamage) -> Int {
        guard buffer.count > 0, offset < size else { return 0 }
        while true {
            let count = pread(descriptor, buffer.baseAddress, buffer.count, off_t(offset))
            if count >= 0 { return count }
            if errno == EINTR { continue }
            throw StageDamage(offset: offset, reason: "read error: \(String(cString: strerror(errno)))")
        }
    }
}

/// Bytes in memory (an input handed over whole: tests, fuzzing).
struct MemoryByteSource: ByteSource {
    let contents: [UInt8]

    var size: Int64 { Int64(contents.count) }

    func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws(StageDamage) -> Int {
        guard offset >= 0, offset < size else { return 0 }
        let count = min(buffer.count, contents.count - Int(offset))
        contents.withUnsafeBytes { source in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[Int(offset)..<Int(offset) + count]))
        }
        return count
    }
}

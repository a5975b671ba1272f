import Foundation

extension UnsafeBufferPointer<UInt8> {
    /// The index of the first `byte` in `self[start..<end]` (`end` defaults to the end), found with `memchr`:
    /// newlines, JWS dots and string ends are searched over kilobytes for every record, where a byte loop ran at
    /// a fraction of the speed.
    func index(of byte: UInt8, from start: Int, before end: Int? = nil) -> Int? {
        let end = Swift.min(end ?? count, count)
        guard start < end, let base = baseAddress,
              let found = memchr(base + start, Int32(byte), end - start) else { return nil }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }
}

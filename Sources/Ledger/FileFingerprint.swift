import Crypto
import Foundation
import Ingest

/// What identifies one version of an input file: its path as named, its size and the SHA-256 of its bytes.
/// A file whose fingerprint matches a `done` manifest row is skipped; any change (appended records, a rewrite)
/// makes it a new version that is read again.
public struct FileFingerprint: Sendable, Hashable {
    public var path: String
    /// Size in bytes.
    public var size: Int64
    /// Lowercase hex SHA-256 of the file's bytes.
    public var sha256: String

    public init(path: String, size: Int64, sha256: String) {
        self.path = path
        self.size = size
        self.sha256 = sha256
    }

    /// Hashes the file in 1 MiB chunks: memory stays constant whatever the file's size. The fingerprint's
    /// ``path`` is the path's text (``InputPath/description``); the file is opened by its bytes.
    public static func of(_ path: InputPath) throws(LedgerError) -> FileFingerprint {
        try of(path, firstBytes: .max)
    }

    /// The fingerprint of the file's first `count` bytes (all of them when it is shorter): whether a file grew from
    /// a version read before is whether this, at that version's size, is that version's fingerprint.
    public static func of(_ path: InputPath, firstBytes count: Int64) throws(LedgerError) -> FileFingerprint {
        let name = path.description
        let descriptor = path.withCString { open($0, O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
        guard descriptor >= 0 else {
            throw LedgerError(kind: .unreadableFile, path: name, message: "cannot open the file for reading: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var hasher = SHA256()
        var size: Int64 = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while size < count {
            let got = read(descriptor, buffer.baseAddress, Int(min(Int64(buffer.count), count - size)))
            if got < 0 {
                if errno == EINTR { continue }
                throw LedgerError(kind: .unreadableFile, path: name, message: "read failed: \(String(cString: strerror(errno)))")
            }
            if got == 0 { break }
            hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[..<got]))
            size += Int64(got)
        }
        return FileFingerprint(path: name, size: size, sha256: hasher.finalize().hexString)
    }

    /// ``of(_:)`` of a path given as text.
    public static func of(path: String) throws(LedgerError) -> FileFingerprint {
        try of(InputPath(path))
    }
}

extension Sequence<UInt8> {
    /// Lowercase hex, two digits per byte. Runs for every fact key, so it builds the UTF-8 bytes directly.
    var hexString: String {
        var digits: [UInt8] = []
        digits.reserveCapacity(underestimatedCount * 2)
        for byte in self {
            digits.append(Self.hexDigit(byte >> 4))
            digits.append(Self.hexDigit(byte & 0x0f))
        }
        return String(decoding: digits, as: UTF8.self)
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}

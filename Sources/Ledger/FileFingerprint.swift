import Crypto
import Foundation

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

    /// Hashes the file in 1 MiB chunks: memory stays constant whatever the file's size.
    public static func of(path: String) throws(LedgerError) -> FileFingerprint {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else {
            throw LedgerError(kind: .unreadableFile, path: path, message: "cannot open the file for reading: \(String(cString: strerror(errno)))")
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        defer { try? handle.close() }
        var hasher = SHA256()
        var size: Int64 = 0
        do {
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                hasher.update(data: chunk)
                size += Int64(chunk.count)
            }
        } catch {
            throw LedgerError(kind: .unreadableFile, path: path, message: "cannot read the file (an I/O error)",
                              detail: String(describing: error))
        }
        return FileFingerprint(path: path, size: size, sha256: hasher.finalize().hexString)
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

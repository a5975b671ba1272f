import Foundation

/// A file system path as the bytes the kernel knows it by, with a text form for messages and the ledger.
///
/// POSIX paths are bytes, not text: a file name need not be valid UTF-8 (archives copied from an old Latin-1
/// system keep names such as `caf\xE9.ndjson`). A Swift `String` cannot hold such bytes (decoding replaces them
/// with U+FFFD, and the file is then "not found"), so every system call goes through ``bytes``, and only
/// messages, provenance and the ledger's manifest use ``description``, where each byte that is not part of valid
/// UTF-8 is written `\xNN`.
public struct InputPath: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The path's bytes, without a terminating NUL.
    public let bytes: [UInt8]

    public init(bytes: some Sequence<UInt8>) {
        self.bytes = Array(bytes)
    }

    /// The path of a text (valid UTF-8 by construction).
    public init(_ text: String) {
        bytes = Array(text.utf8)
    }

    /// The path as text: valid UTF-8 as is, every other byte as `\xNN` (two uppercase hex digits).
    public var description: String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        var text = ""
        var index = 0
        while index < bytes.count {
            let length = Self.sequenceLength(bytes, at: index)
            if length > 0, let scalar = String(validating: bytes[index..<index + length], as: UTF8.self) {
                text += scalar
                index += length
            } else {
                text += "\\x" + String(bytes[index], radix: 16, uppercase: true).leftPadded(to: 2)
                index += 1
            }
        }
        return text
    }

    /// Whether the path is valid UTF-8 (its ``description`` is the path itself).
    public var isText: Bool { String(validating: bytes, as: UTF8.self) != nil }

    /// The last component's bytes (after the last `/`).
    public var lastComponent: ArraySlice<UInt8> {
        let trimmed = bytes.last == UInt8(ascii: "/") ? bytes.dropLast() : bytes[...]
        guard let slash = trimmed.lastIndex(of: UInt8(ascii: "/")) else { return trimmed }
        return trimmed[(slash + 1)...]
    }

    /// The folder holding the last component: the bytes before the last `/` (trailing ones ignored), `/` for a
    /// component of the root, `.` for a bare name. (Foundation's `deletingLastPathComponent` traps on some
    /// one-letter paths.)
    public var folder: InputPath {
        var trimmed = bytes[...]
        while trimmed.count > 1, trimmed.last == UInt8(ascii: "/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: UInt8(ascii: "/")) else { return InputPath(".") }
        return slash == trimmed.startIndex ? InputPath("/") : InputPath(bytes: trimmed[..<slash])
    }

    /// `self/name`, without doubling a trailing `/`; `.` joined with a name is the name alone.
    func appending(_ name: some Collection<UInt8>) -> InputPath {
        if bytes == [UInt8(ascii: ".")] { return InputPath(bytes: name) }
        var joined = bytes
        if joined.last != UInt8(ascii: "/") { joined.append(UInt8(ascii: "/")) }
        joined.append(contentsOf: name)
        return InputPath(bytes: joined)
    }

    /// Calls `body` with the path as a NUL-terminated C string.
    public func withCString<Result>(_ body: (UnsafePointer<CChar>) throws -> Result) rethrows -> Result {
        try (bytes + [0]).withUnsafeBufferPointer { buffer in
            try buffer.withMemoryRebound(to: CChar.self) { try body($0.baseAddress!) }
        }
    }

    /// Bytewise order, the order folders are walked in.
    public static func < (lhs: InputPath, rhs: InputPath) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }

    /// The length a UTF-8 sequence starting with `bytes[index]` claims (1 to 4), 0 for a byte that cannot start one.
    private static func sequenceLength(_ bytes: [UInt8], at index: Int) -> Int {
        let lead = bytes[index]
        let length: Int
        switch lead {
        case 0x00...0x7F: length = 1
        case 0xC2...0xDF: length = 2
        case 0xE0...0xEF: length = 3
        case 0xF0...0xF4: length = 4
        default: return 0
        }
        return index + length <= bytes.count ? length : 0
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: Swift.max(0, width - count)) + self
    }
}

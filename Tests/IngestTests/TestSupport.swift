import AppStore
import Facts
import PlayStore
import Foundation
import SystemZlib
import Testing
import ZIPFoundation
@testable import Ingest

/// A fresh temporary folder per test, removed when the test's value goes away.
final class TemporaryFolder {
    let path: String

    init() throws {
        let base = FileManager.default.temporaryDirectory.path
        path = base + "/ingest-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Writes `bytes` at `name` (relative, folders created) and returns the full path.
    @discardableResult
    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let full = path + "/" + name
        let folder = (full as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: full, contents: Data(bytes)) else {
            throw TestFailure("cannot write \(full)")
        }
        return full
    }

    @discardableResult
    func write(_ name: String, _ text: String) throws -> String { try write(name, Array(text.utf8)) }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Everything one read yields.
struct ReadResult {
    var records: [RawRecord]
    var damages: [Damage]

    var texts: [String] { records.map { String(decoding: $0.bytes, as: UTF8.self) } }
    var positions: [Int64] { records.map(\.provenance.position) }
    var members: [String?] { records.map(\.provenance.member) }
}

func readAll(_ path: String, reader: ArchiveReader = ArchiveReader()) throws -> ReadResult {
    var records: [RawRecord] = []
    let damages = try reader.read(path: path) { records.append($0) }
    return ReadResult(records: records, damages: damages)
}

/// Gzip through the system zlib (deflate with a gzip header: windowBits 15 + 16), as `gzip(1)` writes it.
final class GzipWriter {
    private let stream: UnsafeMutablePointer<z_stream>
    private var output: [UInt8] = []
    private let handle: FileHandle?

    /// Compresses into memory, or appends to `file` as it goes when given. `windowBits` -15 gives raw deflate
    /// (zip entries) instead of gzip.
    init(file: String? = nil, windowBits: Int32 = 15 + 16) throws {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = deflateInit2_(stream, 6, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                                   Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { throw TestFailure("deflateInit2 failed: \(status)") }
        if let file {
            guard FileManager.default.createFile(atPath: file, contents: nil) else { throw TestFailure("cannot create \(file)") }
            handle = FileHandle(forWritingAtPath: file)
        } else {
            handle = nil
        }
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
    }

    func write(_ bytes: [UInt8]) throws { try run(bytes, flush: Z_NO_FLUSH) }

    /// Ends the gzip member and returns its bytes (empty when writing to a file).
    func finish() throws -> [UInt8] {
        try run([], flush: Z_FINISH)
        try handle?.close()
        return output
    }

    private func run(_ input: [UInt8], flush: Int32) throws {
        var input = input
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        try input.withUnsafeMutableBufferPointer { inBuffer in
            stream.pointee.next_in = inBuffer.baseAddress
            stream.pointee.avail_in = uInt(inBuffer.count)
            repeat {
                let produced: Int = chunk.withUnsafeMutableBufferPointer { outBuffer in
                    stream.pointee.next_out = outBuffer.baseAddress
                    stream.pointee.avail_out = uInt(outBuffer.count)
                    _ = deflate(stream, flush)
                    return outBuffer.count - Int(stream.pointee.avail_out)
                }
                if let handle {
                    try handle.write(contentsOf: chunk[..<produced])
                } else {
                    output.append(contentsOf: chunk[..<produced])
                }
            } while stream.pointee.avail_out == 0 || (flush == Z_FINISH && stream.pointee.avail_in > 0)
            stream.pointee.next_in = nil
        }
    }

    static func gzip(_ bytes: [UInt8]) throws -> [UInt8] {
        let writer = try GzipWriter()
        try writer.write(bytes)
        return try writer.finish()
    }

    static func gzip(_ text: String) throws -> [UInt8] { try gzip(Array(text.utf8)) }
}

/// Tar archives built by hand, header by header, as GNU tar and bsdtar write them.
enum TarBuilder {
    enum Entry {
        case file(String, [UInt8])
        case directory(String)
        /// A pax extended header carrying `path`, followed by the file under a short placeholder name.
        case paxFile(path: String, [UInt8])
        /// A GNU `././@LongLink` entry carrying the long name, followed by the file under a cut name.
        case gnuLongFile(path: String, [UInt8])
    }

    static func archive(_ entries: [Entry], endMarker: Bool = true) -> [UInt8] {
        var out: [UInt8] = []
        for entry in entries {
            switch entry {
            case .file(let name, let data):
                append(name: name, type: UInt8(ascii: "0"), data: data, to: &out)
            case .directory(let name):
                append(name: name, type: UInt8(ascii: "5"), data: [], to: &out)
            case .paxFile(let path, let data):
                let record = paxRecord("path", path)
                append(name: "PaxHeaders.0/long", type: UInt8(ascii: "x"), data: Array(record.utf8), to: &out)
                append(name: String(path.suffix(90)), type: UInt8(ascii: "0"), data: data, to: &out)
            case .gnuLongFile(let path, let data):
                append(name: "././@LongLink", type: UInt8(ascii: "L"), data: Array(path.utf8) + [0], to: &out)
                append(name: String(path.prefix(99)), type: UInt8(ascii: "0"), data: data, to: &out)
            }
        }
        if endMarker { out.append(contentsOf: [UInt8](repeating: 0, count: 1024)) }
        return out
    }

    /// `"<length> key=value\n"` where length counts the whole record, its own digits included.
    static func paxRecord(_ key: String, _ value: String) -> String {
        let body = " \(key)=\(value)\n"
        var length = body.utf8.count + 1
        while String(length).utf8.count + body.utf8.count != length { length += 1 }
        return "\(length)\(body)"
    }

    static func append(name: String, type: UInt8, data: [UInt8], to out: inout [UInt8]) {
        out.append(contentsOf: header(name: name, size: data.count, type: type))
        out.append(contentsOf: data)
        out.append(contentsOf: [UInt8](repeating: 0, count: (512 - data.count % 512) % 512))
    }

    static func header(name: String, size: Int, type: UInt8, prefix: String = "") -> [UInt8] {
        var block = [UInt8](repeating: 0, count: 512)
        func put(_ text: String, at offset: Int) {
            for (i, byte) in text.utf8.enumerated() { block[offset + i] = byte }
        }
        func octal(_ value: Int, width: Int) -> String {
            let digits = String(value, radix: 8)
            return String(repeating: "0", count: width - 1 - digits.count) + digits
        }
        put(String(name.prefix(100)), at: 0)
        put(octal(0o644, width: 8), at: 100)
        put(octal(1000, width: 8), at: 108)
        put(octal(1000, width: 8), at: 116)
        put(octal(size, width: 12), at: 124)
        put(octal(1_709_294_400, width: 12), at: 136)
        put("        ", at: 148)
        block[156] = type
        put("ustar", at: 257)
        put("00", at: 263)
        put("user", at: 265)
        put("user", at: 297)
        put(prefix, at: 345)
        let sum = block.reduce(0) { $0 + Int($1) }
        put(octal(sum, width: 7), at: 148)
        block[155] = UInt8(ascii: " ")
        return block
    }
}

/// Zip archives through ZIPFoundation, deflated as `zip(1)` does.
enum ZipBuilder {
    static func write(_ path: String, members: [(String, [UInt8])]) throws {
        let archive = try Archive(url: URL(fileURLWithPath: path), accessMode: .create)
        for (name, bytes) in members {
            let data = Data(bytes)
            try archive.addEntry(with: name, type: .file, uncompressedSize: Int64(data.count),
                                 compressionMethod: .deflate) { position, size in
                data.subdata(in: Int(position)..<Int(position) + size)
            }
        }
    }
}

/// The plausible times of a run whose clock reads 2026-01-01T00:00:00Z: fixed, so that tests never depend on today.
let testTimes = PlausibleTimes(now: 1_767_225_600_000)

/// Zip archives written byte by byte (PKWARE APPNOTE 6.3, §4.3.7 local header, §4.3.12 central directory,
/// §4.3.16 end record), so that a test can state sizes and CRCs that do not match the data.
enum HandmadeZip {
    struct Member {
        var name: String
        /// The bytes stored for the member (deflated or not), exactly as given.
        var data: [UInt8]
        /// 0 stored, 8 deflate.
        var method: UInt16 = 8
        var crc: UInt32
        var uncompressedSize: Int
    }

    /// A member whose data is `content` deflated, all fields right.
    static func deflated(_ name: String, _ content: [UInt8]) throws -> Member {
        let writer = try GzipWriter(windowBits: -15)
        try writer.write(content)
        return Member(name: name, data: try writer.finish(), crc: crc32(content), uncompressedSize: content.count)
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        UInt32(bytes.withUnsafeBufferPointer { SystemZlib.crc32(0, $0.baseAddress, uInt($0.count)) })
    }

    /// `zip64`: every size and offset in the headers is 0xFFFFFFFF with the real value in a zip64 extra field
    /// (APPNOTE 4.5.3), and the directory is found through the zip64 end record and its locator (4.3.14, 4.3.15),
    /// as writers do for archives over 4 GiB.
    static func archive(_ members: [Member], zip64: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        var directory: [UInt8] = []
        func le16(_ value: Int, _ into: inout [UInt8]) { into += [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
        func le32(_ value: Int, _ into: inout [UInt8]) { le16(value & 0xFFFF, &into); le16(value >> 16 & 0xFFFF, &into) }
        func le64(_ value: Int, _ into: inout [UInt8]) { le32(value & 0xFFFF_FFFF, &into); le32(value >> 32, &into) }
        let wide = 0xFFFF_FFFF
        for member in members {
            let offset = out.count
            let name = Array(member.name.utf8)
            var localExtra: [UInt8] = []
            var centralExtra: [UInt8] = []
            if zip64 {
                le16(1, &localExtra); le16(16, &localExtra); le64(member.uncompressedSize, &localExtra); le64(member.data.count, &localExtra)
                le16(1, &centralExtra); le16(24, &centralExtra)
                le64(member.uncompressedSize, &centralExtra); le64(member.data.count, &centralExtra); le64(offset, &centralExtra)
            }
            out += [0x50, 0x4B, 0x03, 0x04]
            le16(zip64 ? 45 : 20, &out); le16(0x0800, &out); le16(Int(member.method), &out); le16(0, &out); le16(0x5821, &out)
            le32(Int(member.crc), &out); le32(zip64 ? wide : member.data.count, &out); le32(zip64 ? wide : member.uncompressedSize, &out)
            le16(name.count, &out); le16(localExtra.count, &out)
            out += name + localExtra + member.data
            directory += [0x50, 0x4B, 0x01, 0x02]
            le16(0x0314, &directory); le16(zip64 ? 45 : 20, &directory); le16(0x0800, &directory); le16(Int(member.method), &directory)
            le16(0, &directory); le16(0x5821, &directory)
            le32(Int(member.crc), &directory); le32(zip64 ? wide : member.data.count, &directory)
            le32(zip64 ? wide : member.uncompressedSize, &directory)
            le16(name.count, &directory); le16(centralExtra.count, &directory); le16(0, &directory); le16(0, &directory); le16(0, &directory)
            le32(0o100644 << 16, &directory); le32(zip64 ? wide : offset, &directory)
            directory += name + centralExtra
        }
        let directoryOffset = out.count
        out += directory
        if zip64 {
            let recordOffset = out.count
            out += [0x50, 0x4B, 0x06, 0x06]
            le64(44, &out); le16(45, &out); le16(45, &out); le32(0, &out); le32(0, &out)
            le64(members.count, &out); le64(members.count, &out); le64(directory.count, &out); le64(directoryOffset, &out)
            out += [0x50, 0x4B, 0x06, 0x07]
            le32(0, &out); le64(recordOffset, &out); le32(1, &out)
        }
        out += [0x50, 0x4B, 0x05, 0x06]
        le16(0, &out); le16(0, &out); le16(zip64 ? 0xFFFF : members.count, &out); le16(zip64 ? 0xFFFF : members.count, &out)
        le32(zip64 ? wide : directory.count, &out); le32(zip64 ? wide : directoryOffset, &out); le16(0, &out)
        return out
    }
}

/// Runs `body` on a thread of its own and waits at most `seconds` for it: a reader that loops forever fails
/// the test instead of hanging the run (the thread is left behind; the test process ends anyway).
func finishes<T: Sendable>(within seconds: Double, _ body: @escaping @Sendable () throws -> T) throws -> T? {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        box.result = Result { try body() }
        done.signal()
    }
    thread.stackSize = 8 << 20
    thread.start()
    guard done.wait(timeout: .now() + seconds) == .success else { return nil }
    return try box.result?.get()
}

/// Where a thread leaves its result; read only after the thread signalled.
final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}

extension RecordParser {
    /// A parser of both stores' records, as the pipeline builds it (`StoreCatalog`): Ingest knows no store, so
    /// its tests bring the stores' recognizers.
    init(times: PlausibleTimes) {
        self.init(times: times, recognizers: [AppStorePayloads(), PlayStorePayloads()])
    }
}

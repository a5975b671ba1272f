import Testing
@testable import Ingest

/// Header fields that real tar writers use beyond the basics.
@Suite struct TarHeaderTests {
    @Test func ustarPrefixIsJoinedToTheName() throws {
        let block = TarBuilder.header(name: "2024-03.ndjson", size: 10, type: UInt8(ascii: "0"), prefix: "exports/google")
        let header = try #require(TarHeader(block))
        #expect(header.name == "exports/google/2024-03.ndjson")
        #expect(header.size == 10)
        #expect(header.type == UInt8(ascii: "0"))
    }

    @Test func oldGNUMagicHasNoPrefix() throws {
        var block = TarBuilder.header(name: "a.ndjson", size: 1, type: UInt8(ascii: "0"))
        // "ustar  \0": old GNU format, whose prefix area holds times, not a path.
        for (i, byte) in Array("ustar  \0".utf8).enumerated() { block[257 + i] = byte }
        for i in 345..<357 { block[i] = UInt8(ascii: "1") }
        Self.reseal(&block)
        #expect(TarHeader(block)?.name == "a.ndjson")
    }

    @Test func base256SizeAsGNUWritesLargeMembers() throws {
        var block = TarBuilder.header(name: "huge.ndjson", size: 0, type: UInt8(ascii: "0"))
        let size: Int64 = 10_000_000_000
        for i in 0..<12 { block[124 + i] = 0 }
        block[124] = 0x80
        for i in 0..<8 { block[135 - i] = UInt8(truncatingIfNeeded: size >> (8 * Int64(i))) }
        Self.reseal(&block)
        #expect(TarHeader(block)?.size == size)
    }

    @Test func checksumMismatchIsRejected() {
        var block = TarBuilder.header(name: "a.ndjson", size: 1, type: UInt8(ascii: "0"))
        block[0] = UInt8(ascii: "b")
        #expect(TarHeader(block) == nil)
    }

    @Test func paxPathAndSizeRecords() {
        let data = Array((TarBuilder.paxRecord("mtime", "1709294400.5") + TarBuilder.paxRecord("path", "a/é/long name.ndjson")
                          + TarBuilder.paxRecord("size", "8589934592")).utf8)
        #expect(TarHeader.paxRecords(data) == ("a/é/long name.ndjson", 8_589_934_592))
        #expect(TarHeader.paxRecords(Array(TarBuilder.paxRecord("size", "-1").utf8)) == (nil, nil))
        #expect(TarHeader.paxRecords(Array("garbage".utf8)) == (nil, nil))
    }

    static func reseal(_ block: inout [UInt8]) {
        for i in 148..<156 { block[i] = UInt8(ascii: " ") }
        let sum = block.reduce(0) { $0 + Int($1) }
        let digits = String(sum, radix: 8)
        let field = String(repeating: "0", count: 6 - digits.count) + digits
        for (i, byte) in field.utf8.enumerated() { block[148 + i] = byte }
        block[154] = 0
    }
}

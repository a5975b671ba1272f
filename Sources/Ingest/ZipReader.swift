import SystemZlib

/// Reads the members of a zip file (PKWARE APPNOTE 6.3: central directory, zip64, stored and deflated members),
/// streaming each member's bytes, never to disk, into the stages its content calls for.
///
/// Written here rather than taken from ZIPFoundation: ZIPFoundation 0.9.20 loops forever on a member whose
/// deflate stream ends before its end marker (its provider returns 0 bytes at the end and nothing throws),
/// and it reports no offsets. Here every member is inflated with the same zlib ``Inflater`` as gzip, and every
/// step consumes input or stops: a deflate stream that is cut off, or that zlib cannot go on with, is damage
/// at the file offset where it stopped, and the other members are still read.
///
/// Members are read in central directory order. When the end-of-central-directory record is missing (the file
/// was cut off), the local headers are walked from the start instead, so that every member before the cut is
/// read, and the cut is reported where the walk stopped.
struct ZipReader {
    /// The file's name in messages and provenance.
    let file: String
    let source: any ByteSource
    /// The stages for a member, from its path.
    let stagesForMember: (_ member: String) -> any StreamStage

    func read(emit: (RawRecord) throws -> Void) throws -> [Damage] {
        var damages: [Damage] = []
        do {
            if let directory = try ZipDirectory.locate(in: source) {
                try readDirectory(directory, damages: &damages, emit: emit)
            } else {
                try walkLocalHeaders(damages: &damages, emit: emit)
            }
        } catch let damage as StageDamage {
            damages.append(Damage(file: file, offset: damage.offset, reason: damage.reason))
        }
        // Sizes and offsets come from the file's own headers: one that points past the end means the file ends
        // before it, and that is where the damage is.
        return damages.map { Damage(file: $0.file, offset: min(max($0.offset, 0), source.size), reason: $0.reason) }
    }

    /// Every entry the central directory lists, in order: as many as its end record counts, and on to the end of
    /// the directory its size states (a zip of more than 65,535 members written without zip64 counts them modulo
    /// 65,536; `unzip` and Python read them all too).
    private func readDirectory(_ directory: ZipDirectory, damages: inout [Damage],
                               emit: (RawRecord) throws -> Void) throws {
        var offset = directory.offset
        var claimed = ClaimedRanges()
        var index: Int64 = 0
        while index < directory.entries || offset < directory.end {
            guard let entry = try ZipEntry.central(in: source, at: offset) else {
                // Past the count, the stated size may be wrong: the entries counted were all there.
                guard index < directory.entries else { return }
                throw StageDamage(offset: offset, reason: "zip directory damaged at entry \(index + 1) of \(directory.entries)")
            }
            offset = entry.next
            index += 1
            guard entry.isReadable else { continue }
            try read(entry, claimed: &claimed, damages: &damages, emit: emit)
        }
    }

    /// The local headers from the start of the file, for a zip whose directory is missing.
    private func walkLocalHeaders(damages: inout [Damage], emit: (RawRecord) throws -> Void) throws {
        var offset: Int64 = 0
        var members = 0
        var claimed = ClaimedRanges()
        while let entry = try ZipEntry.local(in: source, at: offset) {
            guard let end = try read(entry, claimed: &claimed, damages: &damages, emit: emit) else {
                // A member whose end cannot be found (stored, sizes after its data): nothing after it can be.
                return
            }
            // A size that runs past the end of the file: the file was cut inside this member.
            offset = min(end, source.size)
            members += 1
        }
        let what = members == 0 ? "no member could be read"
            : members == 1 ? "the member before it was read" : "the \(members) members before it were read"
        throw StageDamage(offset: offset, reason: "zip cut off or damaged: its central directory is missing (\(what))")
    }

    /// Streams one member through its stages.
    /// - Returns: the offset after the member's data (and data descriptor), where the next local header starts;
    ///   `nil` when the member is damaged in a way that hides where it ends.
    @discardableResult
    private func read(_ entry: ZipEntry, claimed: inout ClaimedRanges, damages: inout [Damage],
                      emit: (RawRecord) throws -> Void) throws -> Int64? {
        let member = entry.name
        func damage(_ offset: Int64, _ reason: String) {
            damages.append(Damage(file: file, offset: offset, reason: "member \(member): \(reason)"))
        }
        guard let dataOffset = try entry.dataOffset(in: source) else {
            damage(entry.headerOffset, "local header damaged or cut off")
            return nil
        }
        /// Where the data ends when its size is stated.
        let dataEnd = entry.compressedSize.flatMap { dataOffset.addingReportingOverflow($0).overflow ? nil : dataOffset + $0 }
        // Members whose bytes overlap are how small zips inflate to terabytes (each entry reads the same data).
        guard claimed.claim(entry.headerOffset..<max(dataEnd ?? dataOffset, dataOffset)) else {
            damage(entry.headerOffset, "its data overlaps another member's, not read (a zip bomb, or a damaged directory)")
            return dataEnd
        }
        guard entry.flags & 1 == 0 else {
            damage(entry.headerOffset, "encrypted, not read")
            return dataEnd
        }
        guard entry.method == 0 || entry.method == 8 else {
            damage(entry.headerOffset, "compression method \(entry.method) is not read (only stored and deflate)")
            return dataEnd
        }
        var stage = stagesForMember(member)
        do {
            let copied = try copy(entry, from: dataOffset, into: &stage, damages: &damages, emit: emit)
            if let crc = entry.crc, copied.crc != UInt(crc) {
                damage(copied.end, "CRC-32 mismatch (corrupt data)")
                return copied.next
            }
            if let size = entry.uncompressedSize, copied.size != size {
                damage(copied.end, "\(copied.size) bytes inflated where the zip says \(size) (corrupt data)")
                return copied.next
            }
            try stage.finish(origin: ChunkOrigin(offset: copied.end, linear: false), damages: &damages, emit: emit)
            return copied.next
        } catch let failure as SinkFailure {
            throw failure
        } catch let failure as StageDamage {
            damage(failure.offset, failure.reason)
            return nil
        }
    }

    /// What copying a member's data found.
    private struct Copied {
        /// File offset after the compressed data.
        var end: Int64
        /// Where the next local header starts (after a data descriptor, if any).
        var next: Int64
        var crc: UInt
        var size: Int64
    }

    /// Copies a member's data into `stage`, inflating deflated data.
    private func copy(_ entry: ZipEntry, from start: Int64, into stage: inout any StreamStage, damages: inout [Damage],
                      emit: (RawRecord) throws -> Void) throws -> Copied {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: StreamLimits.chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        var crc = SystemZlib.crc32(0, nil, 0)
        var size: Int64 = 0
        /// Compressed bytes available: the stated size, else (sizes in a data descriptor) up to the end of the file.
        let limit = entry.compressedSize.map { min(start + $0, source.size) } ?? source.size
        let inflater = entry.method == 8 ? try Inflater(windowBits: -15) : nil
        var position = start
        var ended = false
        while position < limit && !ended {
            let count = try source.read(at: position, into: UnsafeMutableRawBufferPointer(
                rebasing: buffer[..<Int(min(Int64(buffer.count), limit - position))]))
            guard count > 0 else { break }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[..<count])
            guard let inflater else {
                crc = Self.crc(crc, chunk)
                size += Int64(count)
                try stage.write(chunk, origin: ChunkOrigin(offset: position, linear: true), damages: &damages, emit: emit)
                position += Int64(count)
                continue
            }
            let chunkStart = position
            let result: (consumed: Int, ended: Bool)
            do {
                result = try inflater.inflate(chunk) { output, consumedBefore in
                    crc = Self.crc(crc, output)
                    size += Int64(output.count)
                    try stage.write(output, origin: ChunkOrigin(offset: chunkStart + Int64(consumedBefore), linear: false),
                                    damages: &damages, emit: emit)
                }
            } catch let failure as InflateFailure {
                throw StageDamage(offset: chunkStart + Int64(failure.consumed), reason: "corrupt deflate data: \(failure.message)")
            }
            position += Int64(result.consumed)
            ended = result.ended
            if !ended && result.consumed < count {
                // zlib took nothing more although input was there: it cannot go on, and asking again would loop.
                throw StageDamage(offset: position, reason: "corrupt deflate data: the stream stops making progress")
            }
        }
        if inflater != nil && !ended {
            throw StageDamage(offset: position, reason: "deflate stream cut off before its end (truncated)")
        }
        if inflater == nil, let stated = entry.compressedSize, position < start + stated {
            throw StageDamage(offset: position, reason: "cut off: \(start + stated - position) bytes of its data missing")
        }
        // The next local header follows the data as the header sizes it (a deflate stream may end before), or
        // the data descriptor of a member whose sizes come after its data.
        let next = entry.hasDataDescriptor ? try ZipEntry.skipDataDescriptor(in: source, at: position)
            : entry.compressedSize.map { max(position, start &+ $0) } ?? position
        return Copied(end: position, next: next, crc: crc, size: size)
    }

    private static func crc(_ crc: UInt, _ bytes: UnsafeRawBufferPointer) -> UInt {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return crc }
        return SystemZlib.crc32(crc, base.assumingMemoryBound(to: Bytef.self), uInt(bytes.count))
    }
}

/// The byte ranges of the members read so far, to refuse a member that overlaps one of them.
struct ClaimedRanges {
    /// Sorted by lower bound, pairwise disjoint.
    private var ranges: [Range<Int64>] = []

    /// Adds `range` unless it overlaps one already claimed. Members usually come in file order, so the check
    /// is mostly against the last range; others are placed by binary search.
    mutating func claim(_ range: Range<Int64>) -> Bool {
        let range = range.isEmpty ? range.lowerBound..<range.lowerBound + 1 : range
        if let last = ranges.last, last.upperBound <= range.lowerBound {
            ranges.append(range)
            return true
        }
        var low = 0
        var high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].lowerBound < range.lowerBound { low = middle + 1 } else { high = middle }
        }
        if low > 0, ranges[low - 1].upperBound > range.lowerBound { return false }
        if low < ranges.count, ranges[low].lowerBound < range.upperBound { return false }
        ranges.insert(range, at: low)
        return true
    }
}

/// The end-of-central-directory record (zip64 when the archive needs it): where the directory is.
struct ZipDirectory {
    var entries: Int64
    var offset: Int64
    /// Where the directory ends, by the size its record states (`offset` + size, saturating).
    var end: Int64

    /// Finds the record in the last 64 KiB + 22 bytes (its comment is at most 65,535 bytes); `nil` when there
    /// is none (the file was cut off, or is not a zip).
    static func locate(in source: any ByteSource) throws(StageDamage) -> ZipDirectory? {
        let tailSize = min(source.size, 22 + 65_535)
        guard tailSize >= 22, let tail = try source.bytes(at: source.size - tailSize, count: Int(tailSize)) else { return nil }
        var index = tail.count - 22
        while index >= 0 {
            if tail[index] == 0x50, tail[index + 1] == 0x4B, tail[index + 2] == 0x05, tail[index + 3] == 0x06 {
                let record = Array(tail[index...])
                let recordOffset = source.size - tailSize + Int64(index)
                var directory = ZipDirectory(entries: Int64(record.uint16(10)), offset: Int64(record.uint32(16)),
                                             end: Int64(record.uint32(16)) + Int64(record.uint32(12)))
                let needsZip64 = record.uint16(10) == 0xFFFF || record.uint32(16) == 0xFFFF_FFFF
                if needsZip64, let zip64 = try zip64(in: source, before: recordOffset) {
                    directory = zip64
                }
                guard directory.offset <= recordOffset else {
                    throw StageDamage(offset: recordOffset, reason: "zip directory offset \(directory.offset) lies past the directory's end record (damaged)")
                }
                return directory
            }
            index -= 1
        }
        return nil
    }

    /// The zip64 end-of-central-directory record, through its locator just before `recordOffset`.
    private static func zip64(in source: any ByteSource, before recordOffset: Int64) throws(StageDamage) -> ZipDirectory? {
        guard recordOffset >= 20, let locator = try source.bytes(at: recordOffset - 20, count: 20),
              locator.starts(with: [0x50, 0x4B, 0x06, 0x07]) else { return nil }
        let offset = locator.uint64(8)
        guard offset <= UInt64(Int64.max), let record = try source.bytes(at: Int64(offset), count: 56),
              record.starts(with: [0x50, 0x4B, 0x06, 0x06]) else { return nil }
        let entries = record.uint64(32)
        let size = record.uint64(40)
        let start = record.uint64(48)
        guard entries <= UInt64(Int64.max), start <= UInt64(Int64.max), size <= UInt64(Int64.max) else { return nil }
        let end = Int64(start).addingReportingOverflow(Int64(size))
        return ZipDirectory(entries: Int64(entries), offset: Int64(start), end: end.overflow ? .max : end.partialValue)
    }
}

/// One member, as its central directory entry (or, for a zip without directory, its local header) describes it.
struct ZipEntry {
    var name: String
    var flags: UInt16
    var method: UInt16
    /// `nil` while they are in a data descriptor after the data (local header of a streamed member).
    var crc: UInt32?
    var compressedSize: Int64?
    var uncompressedSize: Int64?
    /// Where the member's local header starts.
    var headerOffset: Int64
    /// Directories and symbolic links have no records.
    var isReadable: Bool
    /// Offset after this entry's record (the next central directory entry).
    var next: Int64

    /// Bit 3: sizes and CRC follow the data.
    var hasDataDescriptor: Bool { flags & 0x08 != 0 }

    /// The central directory entry at `offset`; `nil` when there is no valid entry there.
    static func central(in source: any ByteSource, at offset: Int64) throws(StageDamage) -> ZipEntry? {
        guard let fixed = try source.bytes(at: offset, count: 46), fixed.starts(with: [0x50, 0x4B, 0x01, 0x02]) else { return nil }
        let nameLength = Int(fixed.uint16(28))
        let extraLength = Int(fixed.uint16(30))
        let commentLength = Int(fixed.uint16(32))
        guard let variable = try source.bytes(at: offset + 46, count: nameLength + extraLength) else { return nil }
        let nameBytes = Array(variable[..<nameLength])
        var uncompressed = Int64(fixed.uint32(24))
        var compressed = Int64(fixed.uint32(20))
        var headerOffset = Int64(fixed.uint32(42))
        // Zip64: the fields that do not fit are 0xFFFFFFFF, and the 0x0001 extra field holds them, in this order.
        if let zip64 = extraField(0x0001, in: Array(variable[nameLength...])) {
            var cursor = 0
            for field in [0, 1, 2] {
                let stated: Int64 = [uncompressed, compressed, headerOffset][field]
                guard stated == 0xFFFF_FFFF, cursor + 8 <= zip64.count else { continue }
                let value = zip64.uint64(cursor)
                cursor += 8
                guard value <= UInt64(Int64.max) else { return nil }
                switch field {
                case 0: uncompressed = Int64(value)
                case 1: compressed = Int64(value)
                default: headerOffset = Int64(value)
                }
            }
        }
        let madeBy = fixed.uint16(4)
        let mode = (fixed.uint32(38) >> 16) & 0o170000
        let isSymlink = madeBy >> 8 == 3 && mode == 0o120000
        let isDirectory = nameBytes.last == UInt8(ascii: "/") || (madeBy >> 8 == 3 && mode == 0o040000)
        return ZipEntry(name: String(decoding: nameBytes, as: UTF8.self), flags: fixed.uint16(8), method: fixed.uint16(10),
                        crc: fixed.uint32(16), compressedSize: compressed, uncompressedSize: uncompressed,
                        headerOffset: headerOffset, isReadable: !isSymlink && !isDirectory,
                        next: offset + 46 + Int64(nameLength + extraLength + commentLength))
    }

    /// The local header at `offset`, for a zip read without its directory; `nil` when there is none there.
    static func local(in source: any ByteSource, at offset: Int64) throws(StageDamage) -> ZipEntry? {
        guard let fixed = try source.bytes(at: offset, count: 30), fixed.starts(with: [0x50, 0x4B, 0x03, 0x04]) else { return nil }
        let nameLength = Int(fixed.uint16(26))
        let extraLength = Int(fixed.uint16(28))
        guard let variable = try source.bytes(at: offset + 30, count: nameLength + extraLength) else { return nil }
        let nameBytes = Array(variable[..<nameLength])
        let flags = fixed.uint16(6)
        var entry = ZipEntry(name: String(decoding: nameBytes, as: UTF8.self), flags: flags, method: fixed.uint16(8),
                             crc: fixed.uint32(14), compressedSize: Int64(fixed.uint32(18)),
                             uncompressedSize: Int64(fixed.uint32(22)), headerOffset: offset,
                             isReadable: nameBytes.last != UInt8(ascii: "/"), next: offset)
        if let zip64 = extraField(0x0001, in: Array(variable[nameLength...])), zip64.count >= 16 {
            entry.uncompressedSize = zip64.uint64(0) <= UInt64(Int64.max) ? Int64(zip64.uint64(0)) : nil
            entry.compressedSize = zip64.uint64(8) <= UInt64(Int64.max) ? Int64(zip64.uint64(8)) : nil
        }
        if entry.hasDataDescriptor {
            entry.crc = nil
            entry.compressedSize = nil
            entry.uncompressedSize = nil
        }
        return entry
    }

    /// Where the member's data starts, after its local header; `nil` when the local header is not there.
    func dataOffset(in source: any ByteSource) throws(StageDamage) -> Int64? {
        guard let fixed = try source.bytes(at: headerOffset, count: 30), fixed.starts(with: [0x50, 0x4B, 0x03, 0x04]) else { return nil }
        let start = headerOffset + 30 + Int64(fixed.uint16(26)) + Int64(fixed.uint16(28))
        return start <= source.size ? start : nil
    }

    /// The offset after the data descriptor at `offset` (optional signature, CRC, then sizes of 4 or 8 bytes each:
    /// 4 unless the next header does not follow them).
    static func skipDataDescriptor(in source: any ByteSource, at offset: Int64) throws(StageDamage) -> Int64 {
        guard let bytes = try source.bytes(at: offset, count: Int(min(24, max(0, source.size - offset)))) else { return offset }
        let signed = bytes.starts(with: [0x50, 0x4B, 0x07, 0x08])
        let base = signed ? 4 : 0
        let short = base + 12
        if bytes.count >= short + 4, bytes[short..<short + 4].elementsEqual([0x50, 0x4B, 0x03, 0x04])
            || bytes[short..<short + 4].elementsEqual([0x50, 0x4B, 0x01, 0x02]) || bytes.count < base + 20 {
            return offset + Int64(min(short, bytes.count))
        }
        return offset + Int64(min(base + 20, bytes.count))
    }

    /// The data of the extra field `id` in an extra block, if present.
    static func extraField(_ id: UInt16, in extra: [UInt8]) -> [UInt8]? {
        var index = 0
        while index + 4 <= extra.count {
            let fieldId = extra.uint16(index)
            let length = Int(extra.uint16(index + 2))
            guard index + 4 + length <= extra.count else { return nil }
            if fieldId == id { return Array(extra[(index + 4)..<(index + 4 + length)]) }
            index += 4 + length
        }
        return nil
    }
}

extension [UInt8] {
    /// Little-endian integers at a byte offset (zip headers); the caller checks the bounds.
    func uint16(_ offset: Int) -> UInt16 { UInt16(self[offset]) | UInt16(self[offset + 1]) << 8 }
    func uint32(_ offset: Int) -> UInt32 { UInt32(uint16(offset)) | UInt32(uint16(offset + 2)) << 16 }
    func uint64(_ offset: Int) -> UInt64 { UInt64(uint32(offset)) | UInt64(uint32(offset + 4)) << 32 }
}

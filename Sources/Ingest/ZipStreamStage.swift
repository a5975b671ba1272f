import SystemZlib

/// Reads a zip archive front to back from its local file headers, for a zip that is itself a member of a tar
/// or zip and so cannot be opened with random access.
///
/// Each entry's local header gives its name, method and (unless bit 3 defers them to a data descriptor) its
/// sizes. Deflated entries are inflated raw (deflate ends itself, so a deferred size is no obstacle); stored
/// entries need their size up front. Zip64 sizes come from the `0x0001` extra field. The central directory at
/// the end repeats what the local headers said and is not read. CRC-32 is checked for every entry.
struct ZipStreamStage: StreamStage {
    private let file: String
    private let label: String
    private let stagesForMember: TarStage.MemberStages
    private let inflater: Inflater

    private struct LocalEntry {
        var name: String
        var flags: UInt16
        var method: UInt16
        var crc: UInt32
        var compressedSize: Int64
        var zip64: Bool
        var hasDescriptor: Bool { flags & 0x0008 != 0 }
    }

    private enum State {
        /// Collecting the 4-byte signature of the next record.
        case signature
        /// Collecting the fixed 26 bytes of a local header after its signature.
        case localHeader
        /// Collecting the name and extra field (`count` bytes).
        case names(count: Int)
        case stored(remaining: Int64)
        /// Inflating; `remaining` is `nil` when the size is deferred to a data descriptor.
        case deflated(remaining: Int64?)
        case skip(remaining: Int64)
        /// Collecting a data descriptor of `count` bytes (decided once its first 4 bytes are known).
        case descriptor(count: Int?)
        /// The central directory: nothing more to read.
        case end
    }

    private var state = State.signature
    private var collected: [UInt8] = []
    private var fixed: [UInt8] = []
    private var entry: LocalEntry?
    private var memberStage: (any StreamStage)?
    private var crc: uLong = 0

    init(file: String, label: String, stagesForMember: @escaping TarStage.MemberStages) throws(StageDamage) {
        self.file = file
        self.label = label
        self.stagesForMember = stagesForMember
        self.inflater = try Inflater(windowBits: -15)
    }

    mutating func write(_ chunk: UnsafeRawBufferPointer, origin: ChunkOrigin, damages: inout [Damage],
                        emit: (RawRecord) throws -> Void) throws {
        var index = 0
        while index < chunk.count {
            let available = chunk.count - index
            switch state {
            case .end:
                return
            case .signature:
                index += collect(upTo: 4, from: chunk, at: index)
                guard collected.count == 4 else { continue }
                let signature = Self.uint32(collected, 0)
                collected.removeAll(keepingCapacity: true)
                switch signature {
                case 0x0403_4B50: state = .localHeader
                case 0x0201_4B50, 0x0605_4B50, 0x0606_4B50, 0x0606_4B51: state = .end
                default:
                    throw StageDamage(offset: origin.offset(at: index - 4),
                                      reason: "zip \(label): no local header where one was expected (signature \(String(signature, radix: 16)))")
                }
            case .localHeader:
                index += collect(upTo: 26, from: chunk, at: index)
                guard collected.count == 26 else { continue }
                fixed = collected
                collected.removeAll(keepingCapacity: true)
                state = .names(count: Int(Self.uint16(fixed, 22)) + Int(Self.uint16(fixed, 24)))
            case .names(let count):
                index += collect(upTo: count, from: chunk, at: index)
                guard collected.count == count else { continue }
                try startEntry(origin: origin, at: index, damages: &damages)
            case .stored(let remaining), .skip(let remaining):
                let take = Int(min(Int64(available), remaining))
                let slice = UnsafeRawBufferPointer(rebasing: chunk[index..<index + take])
                index += take
                let isStored = if case .stored = state { true } else { false }
                if isStored { try feed(slice, origin: origin, damages: &damages, emit: emit) }
                if remaining == Int64(take) {
                    if isStored { try endEntry(origin: origin, damages: &damages, emit: emit) }
                    state = afterEntry
                } else {
                    state = isStored ? .stored(remaining: remaining - Int64(take)) : .skip(remaining: remaining - Int64(take))
                }
            case .deflated(let remaining):
                let limit = remaining.map { Int(min(Int64(available), $0)) } ?? available
                let start = index
                let result: (consumed: Int, ended: Bool)
                do {
                    result = try inflater.inflate(UnsafeRawBufferPointer(rebasing: chunk[start..<start + limit])) { output, _ in
                        try feed(output, origin: ChunkOrigin(offset: origin.offset(at: start), linear: false),
                                 damages: &damages, emit: emit)
                    }
                } catch let failure as InflateFailure {
                    throw StageDamage(offset: origin.offset(at: start + failure.consumed),
                                      reason: "zip \(label): corrupt data in \(entry?.name ?? "?"): \(failure.message)")
                }
                index += result.consumed
                let left = remaining.map { $0 - Int64(result.consumed) }
                if result.ended {
                    try endEntry(origin: origin, damages: &damages, emit: emit)
                    if let left, left > 0 {
                        state = .skip(remaining: left)
                    } else {
                        state = afterEntry
                    }
                } else if left == 0 {
                    throw StageDamage(offset: origin.offset(at: index),
                                      reason: "zip \(label): deflate data of \(entry?.name ?? "?") ends early")
                } else {
                    state = .deflated(remaining: left)
                    if result.consumed == 0 { return }
                }
            case .descriptor(let count):
                let wanted = count ?? 4
                index += collect(upTo: wanted, from: chunk, at: index)
                guard collected.count == wanted else { continue }
                if count == nil {
                    // The descriptor's own signature is optional: without it, the first 4 bytes are the CRC.
                    let sizes = entry?.zip64 == true ? 16 : 8
                    let total = Self.uint32(collected, 0) == 0x0807_4B50 ? 8 + sizes : 4 + sizes
                    state = .descriptor(count: total)
                } else {
                    collected.removeAll(keepingCapacity: true)
                    state = .signature
                }
            }
        }
    }

    mutating func finish(origin: ChunkOrigin, damages: inout [Damage], emit: (RawRecord) throws -> Void) throws {
        switch state {
        case .end:
            return
        case .signature where collected.isEmpty && entry != nil:
            // Entries complete but no central directory: cut exactly between entries.
            throw StageDamage(offset: origin.offset, reason: "zip \(label) cut off before its central directory")
        default:
            throw StageDamage(offset: origin.offset, reason: "zip \(label) cut off\(entry.map { " in entry \($0.name)" } ?? "")")
        }
    }

    /// What follows an entry's data: its data descriptor when bit 3 says there is one, else the next record.
    private var afterEntry: State {
        entry?.hasDescriptor == true ? .descriptor(count: nil) : .signature
    }

    /// Appends up to `count - collected.count` bytes; returns how many were taken.
    private mutating func collect(upTo count: Int, from chunk: UnsafeRawBufferPointer, at index: Int) -> Int {
        let take = min(count - collected.count, chunk.count - index)
        collected.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[index..<index + take]))
        return take
    }

    /// Interprets a complete local header (``fixed``, then name and extra in ``collected``).
    private mutating func startEntry(origin: ChunkOrigin, at index: Int, damages: inout [Damage]) throws {
        let nameLength = Int(Self.uint16(fixed, 22))
        let name = String(decoding: collected[..<nameLength], as: UTF8.self)
        let extra = Array(collected[nameLength...])
        let headerOffset = origin.offset(at: index - 30 - collected.count)
        collected.removeAll(keepingCapacity: true)
        var compressed = Int64(Self.uint32(fixed, 14))
        var zip64 = false
        if compressed == 0xFFFF_FFFF, let sizes = Self.zip64Sizes(extra) {
            compressed = sizes.compressed
            zip64 = true
        }
        let local = LocalEntry(name: name, flags: Self.uint16(fixed, 2), method: Self.uint16(fixed, 4),
                               crc: Self.uint32(fixed, 10), compressedSize: compressed, zip64: zip64)
        entry = local
        crc = crc32(0, nil, 0)
        memberStage = nil
        let sizeKnown = !local.hasDescriptor || compressed > 0
        if name.hasSuffix("/") {
            state = sizeKnown ? .skip(remaining: compressed) : afterEntry
            return
        }
        do {
            memberStage = try stagesForMember(name)
            if memberStage == nil {
                damages.append(Damage(file: file, offset: headerOffset, reason: "member \(label)!\(name): unsupported file type"))
            }
        } catch {
            damages.append(Damage(file: file, offset: headerOffset, reason: "member \(label)!\(name): \(error.reason)"))
        }
        switch local.method {
        case 8:
            inflater.reset()
            state = .deflated(remaining: sizeKnown ? compressed : nil)
        case 0 where sizeKnown:
            state = .stored(remaining: compressed)
        case 0:
            throw StageDamage(offset: headerOffset,
                              reason: "zip \(label): stored entry \(name) defers its size to a data descriptor; it cannot be streamed")
        default:
            guard sizeKnown else {
                throw StageDamage(offset: headerOffset, reason: "zip \(label): entry \(name) uses compression method \(local.method)")
            }
            if memberStage != nil {
                damages.append(Damage(file: file, offset: headerOffset,
                                      reason: "member \(label)!\(name): unsupported compression method \(local.method)"))
            }
            memberStage = nil
            state = .skip(remaining: compressed)
        }
    }

    /// Hands entry bytes to the member's stages, keeping the CRC; member damage is recorded, not fatal.
    private mutating func feed(_ bytes: UnsafeRawBufferPointer, origin: ChunkOrigin, damages: inout [Damage],
                               emit: (RawRecord) throws -> Void) throws {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        crc = crc32(crc, base.assumingMemoryBound(to: Bytef.self), uInt(bytes.count))
        do {
            try memberStage?.write(bytes, origin: origin, damages: &damages, emit: emit)
        } catch let damage as StageDamage {
            damages.append(Damage(file: file, offset: damage.offset, reason: "member \(label)!\(entry?.name ?? "?"): \(damage.reason)"))
            memberStage = nil
        }
    }

    private mutating func endEntry(origin: ChunkOrigin, damages: inout [Damage], emit: (RawRecord) throws -> Void) throws {
        defer { memberStage = nil }
        guard let entry else { return }
        // With a data descriptor the local CRC is 0; the records were streamed, so only a stated CRC is checked.
        if !entry.hasDescriptor, UInt32(truncatingIfNeeded: crc) != entry.crc {
            damages.append(Damage(file: file, offset: origin.offset, reason: "member \(label)!\(entry.name): CRC-32 mismatch (corrupt data)"))
            return
        }
        do {
            try memberStage?.finish(origin: origin, damages: &damages, emit: emit)
        } catch let damage as StageDamage {
            damages.append(Damage(file: file, offset: damage.offset, reason: "member \(label)!\(entry.name): \(damage.reason)"))
        }
    }

    /// Compressed size from a zip64 extended information extra field (id 0x0001: uncompressed, then compressed).
    static func zip64Sizes(_ extra: [UInt8]) -> (uncompressed: Int64, compressed: Int64)? {
        var index = 0
        while index + 4 <= extra.count {
            let id = uint16(extra, index)
            let size = Int(uint16(extra, index + 2))
            if id == 0x0001, size >= 16, index + 4 + 16 <= extra.count {
                return (Int64(bitPattern: uint64(extra, index + 4)), Int64(bitPattern: uint64(extra, index + 12)))
            }
            index += 4 + size
        }
        return nil
    }

    static func uint16(_ bytes: [UInt8], _ at: Int) -> UInt16 {
        UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8
    }

    static func uint32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        UInt32(uint16(bytes, at)) | UInt32(uint16(bytes, at + 2)) << 16
    }

    static func uint64(_ bytes: [UInt8], _ at: Int) -> UInt64 {
        UInt64(uint32(bytes, at)) | UInt64(uint32(bytes, at + 4)) << 32
    }
}

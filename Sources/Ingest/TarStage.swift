/// Reads a tar stream (POSIX ustar, pax and GNU variants) and pushes each regular member through the stages its
/// name calls for. Nothing is written to disk: member paths are only names.
///
/// Honoured: 512-byte headers with verified checksums, ustar `prefix`, pax extended headers (`path`, `size`), GNU
/// `././@LongLink` long names, octal and base-256 sizes, padding to 512 bytes. Directories, links and devices are
/// skipped. Damage inside one member (say a cut gzip) is recorded and the member skipped; a cut or corrupt
/// header ends the archive, with every member before it kept, and so does anything but zeros after the
/// end-of-archive marker (an archive whose first blocks were zeroed reads as an empty one otherwise).
struct TarStage: StreamStage {
    typealias MemberStages = (_ path: String) -> any StreamStage

    private let file: String
    /// Builds the stages for a member from its path.
    private let stagesForMember: MemberStages
    private let label: String

    private enum State {
        case header
        /// A regular member's data, read through ``memberStage``.
        case member(path: String, remaining: Int64)
        /// Data of a pax or GNU long-name header, collected for the next member.
        case extended(kind: UInt8, remaining: Int64)
        /// Data of an entry we do not read.
        case skip(remaining: Int64)
        case padding(remaining: Int64)
        /// Past the end-of-archive marker.
        case end
    }

    private var state = State.header
    /// The stages of the member being read; `nil` once it is skipped (damaged, or not an input). Kept out of
    /// ``state`` so that it is mutated in place rather than copied with its buffers.
    private var memberStage: (any StreamStage)?
    private var header: [UInt8] = []
    private var extendedData: [UInt8] = []
    /// Long name from a pax `path` record or a GNU long-name entry, for the next member.
    private var pendingPath: String?
    /// Size from a pax `size` record, for the next entry (the header's own size is then 0).
    private var pendingSize: Int64?
    /// Tar stream bytes consumed so far.
    private var position: Int64 = 0
    /// Tar stream offset of the current entry's header, for padding and messages.
    private var entryStart: Int64 = 0

    /// Longest pax or long-name data kept; real ones are a few hundred bytes.
    private static let maximumExtendedBytes: Int64 = 1 << 20

    init(file: String, label: String, stagesForMember: @escaping MemberStages) {
        self.file = file
        self.label = label
        self.stagesForMember = stagesForMember
    }

    mutating func write(_ chunk: UnsafeRawBufferPointer, origin: ChunkOrigin, damages: inout [Damage],
                        emit: (RawRecord) throws -> Void) throws {
        let bytes = chunk.assumingMemoryBound(to: UInt8.self)
        var index = 0
        while index < bytes.count {
            let available = bytes.count - index
            switch state {
            case .end:
                // Writers pad past the marker with zeros; anything else there (a file whose first blocks were
                // zeroed, two archives concatenated) would be lost without a word: it is damage.
                let rest = UnsafeBufferPointer(rebasing: bytes[index...])
                guard let found = rest.firstIndex(where: { $0 != 0 }) else {
                    position += Int64(rest.count)
                    return
                }
                throw StageDamage(offset: origin.offset(at: index + found),
                                  reason: "tar \(label): data after the end-of-archive marker at tar byte \(position + Int64(found))")
            case .header:
                let take = min(512 - header.count, available)
                header.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<index + take]))
                index += take
                position += Int64(take)
                if header.count == 512 {
                    entryStart = position - 512
                    try startEntry(origin: origin, at: index, damages: &damages, emit: emit)
                    header.removeAll(keepingCapacity: true)
                }
            case .member(let path, let remaining):
                let take = Int(min(Int64(available), remaining))
                let slice = UnsafeRawBufferPointer(rebasing: chunk[index..<index + take])
                let memberOrigin = ChunkOrigin(offset: origin.offset(at: index), linear: origin.linear)
                index += take
                position += Int64(take)
                let ends = remaining == Int64(take)
                do {
                    try memberStage?.write(slice, origin: memberOrigin, damages: &damages, emit: emit)
                    if ends {
                        try memberStage?.finish(origin: ChunkOrigin(offset: origin.offset(at: index), linear: origin.linear),
                                                damages: &damages, emit: emit)
                    }
                } catch let damage as StageDamage {
                    damages.append(Damage(file: file, offset: damage.offset, reason: "member \(path): \(damage.reason)"))
                    memberStage = nil
                }
                if ends {
                    memberStage = nil
                    state = paddingAfter(entryStart: entryStart)
                } else {
                    state = .member(path: path, remaining: remaining - Int64(take))
                }
            case .extended(let kind, let remaining):
                let take = Int(min(Int64(available), remaining))
                if Int64(extendedData.count) < Self.maximumExtendedBytes {
                    extendedData.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<index + take]))
                }
                index += take
                position += Int64(take)
                if remaining == Int64(take) {
                    applyExtended(kind: kind)
                    state = paddingAfter(entryStart: entryStart)
                } else {
                    state = .extended(kind: kind, remaining: remaining - Int64(take))
                }
            case .skip(let remaining):
                let take = Int(min(Int64(available), remaining))
                index += take
                position += Int64(take)
                state = remaining == Int64(take) ? paddingAfter(entryStart: entryStart) : .skip(remaining: remaining - Int64(take))
            case .padding(let remaining):
                let take = Int(min(Int64(available), remaining))
                index += take
                position += Int64(take)
                state = remaining == Int64(take) ? .header : .padding(remaining: remaining - Int64(take))
            }
        }
    }

    mutating func finish(origin: ChunkOrigin, damages: inout [Damage], emit: (RawRecord) throws -> Void) throws {
        switch state {
        case .end, .padding:
            return
        case .header where header.isEmpty:
            // No end-of-archive marker: many writers omit it, and every member was complete.
            return
        case .header:
            throw StageDamage(offset: origin.offset,
                              reason: "tar \(label) cut off in the header at tar byte \(entryStartOfPartialHeader)")
        case .member(let path, let remaining):
            throw StageDamage(offset: origin.offset,
                              reason: "tar \(label) cut off in member \(path) (\(remaining) bytes missing)")
        case .extended, .skip:
            throw StageDamage(offset: origin.offset, reason: "tar \(label) cut off in the entry at tar byte \(entryStart)")
        }
    }

    private var entryStartOfPartialHeader: Int64 { position - Int64(header.count) }

    private func paddingAfter(entryStart: Int64) -> State {
        let dataEnd = position - entryStart - 512
        let padding = (512 - dataEnd % 512) % 512
        return padding == 0 ? .header : .padding(remaining: padding)
    }

    /// Interprets a complete 512-byte header.
    private mutating func startEntry(origin: ChunkOrigin, at index: Int, damages: inout [Damage],
                                     emit: (RawRecord) throws -> Void) throws {
        if header.allSatisfy({ $0 == 0 }) {
            state = .end
            return
        }
        guard let parsed = TarHeader(header) else {
            throw StageDamage(offset: origin.offset(at: index - 512),
                              reason: "tar \(label): invalid header (checksum mismatch) at tar byte \(entryStart)")
        }
        var size = parsed.size
        switch parsed.type {
        case UInt8(ascii: "x"), UInt8(ascii: "L"):
            extendedData.removeAll(keepingCapacity: true)
            state = size > 0 ? .extended(kind: parsed.type, remaining: size) : .header
        case UInt8(ascii: "0"), 0, UInt8(ascii: "7"):
            let path = pendingPath ?? parsed.name
            size = pendingSize ?? size
            (pendingPath, pendingSize) = (nil, nil)
            memberStage = stagesForMember(path)
            guard size == 0 else {
                state = .member(path: path, remaining: size)
                return
            }
            do {
                try memberStage?.finish(origin: origin, damages: &damages, emit: emit)
            } catch let damage as StageDamage {
                damages.append(Damage(file: file, offset: damage.offset, reason: "member \(path): \(damage.reason)"))
            }
            memberStage = nil
            state = .header
        default:
            // Global pax headers, directories, links, devices, GNU long link names: nothing to read.
            if parsed.type != UInt8(ascii: "g") && parsed.type != UInt8(ascii: "K") {
                size = pendingSize ?? size
                (pendingPath, pendingSize) = (nil, nil)
            }
            state = size > 0 ? .skip(remaining: size) : .header
        }
    }

    private mutating func applyExtended(kind: UInt8) {
        if kind == UInt8(ascii: "L") {
            let name = extendedData.prefix { $0 != 0 }
            pendingPath = String(decoding: name, as: UTF8.self)
        } else {
            let records = TarHeader.paxRecords(extendedData)
            if let path = records.path { pendingPath = path }
            if let size = records.size { pendingSize = size }
        }
        extendedData.removeAll(keepingCapacity: true)
    }
}

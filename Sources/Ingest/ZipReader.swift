import Foundation
import ZIPFoundation

/// Reads the members of a `.zip` file through ZIPFoundation, streaming each member's bytes (never extracting
/// to disk) into the stages its name calls for.
///
/// Zip keeps its directory at the end, so a cut zip usually cannot be opened at all: that is one damage at
/// offset 0. ZIPFoundation does not expose member offsets, so damage inside a member is reported at offset 0
/// with the member named in the reason.
struct ZipReader {
    let path: String
    let stagesForMember: (_ member: String) throws(StageDamage) -> (any StreamStage)?

    func read(emit: (RawRecord) throws -> Void) throws -> [Damage] {
        let archive: Archive
        do {
            archive = try Archive(url: URL(fileURLWithPath: path), accessMode: .read)
        } catch {
            return [Damage(file: path, offset: 0, reason: "cannot open zip archive (damaged or truncated): \(error)")]
        }
        var damages: [Damage] = []
        var seen = 0
        for entry in archive {
            seen += 1
            guard entry.type == .file else { continue }
            try read(entry, of: archive, damages: &damages, emit: emit)
        }
        if let listed = Self.listedEntries(path: path), listed > seen {
            damages.append(Damage(file: path, offset: 0,
                                  reason: "zip directory lists \(listed) entries but only \(seen) could be read"))
        }
        return damages
    }

    private func read(_ entry: Entry, of archive: Archive, damages: inout [Damage],
                      emit: (RawRecord) throws -> Void) throws {
        let member = entry.path
        var stage: (any StreamStage)?
        do {
            stage = try stagesForMember(member)
        } catch {
            damages.append(Damage(file: path, offset: 0, reason: "member \(member): \(error.reason)"))
            return
        }
        guard var stage else {
            damages.append(Damage(file: path, offset: 0, reason: "member \(member): unsupported file type"))
            return
        }
        let origin = ChunkOrigin(offset: 0, linear: false)
        do {
            let checksum = try archive.extract(entry, bufferSize: StreamLimits.chunkSize) { data in
                try data.withUnsafeBytes { bytes in
                    try stage.write(bytes, origin: origin, damages: &damages, emit: emit)
                }
            }
            guard checksum == entry.checksum else {
                damages.append(Damage(file: path, offset: 0, reason: "member \(member): CRC-32 mismatch (corrupt data)"))
                return
            }
            try stage.finish(origin: origin, damages: &damages, emit: emit)
        } catch let failure as SinkFailure {
            throw failure
        } catch let damage as StageDamage {
            damages.append(Damage(file: path, offset: damage.offset, reason: "member \(member): \(damage.reason)"))
        } catch {
            damages.append(Damage(file: path, offset: 0, reason: "member \(member): cannot be read: \(error)"))
        }
    }

    /// The entry count the end-of-central-directory record states, so that entries ZIPFoundation's iterator
    /// silently skips are reported; `nil` when it cannot be found or the archive is zip64.
    static func listedEntries(path: String) -> Int? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let size = try? handle.seekToEnd(), size >= 22 else { return nil }
        let tail = min(size, 22 + 65_535)
        guard (try? handle.seek(toOffset: size - tail)) != nil,
              let data = try? handle.read(upToCount: Int(tail))
        else { return nil }
        let bytes = [UInt8](data)
        var index = bytes.count - 22
        while index >= 0 {
            if bytes[index] == 0x50, bytes[index + 1] == 0x4B, bytes[index + 2] == 0x05, bytes[index + 3] == 0x06 {
                let count = Int(bytes[index + 10]) | Int(bytes[index + 11]) << 8
                return count == 0xFFFF ? nil : count
            }
            index -= 1
        }
        return nil
    }
}

import Foundation
import ZIPFoundation

/// Turns spooled records into the containers of inputs.md: multi-member `.ndjson.gz`, `.tar.gz` (some members
/// `.json.gz`), `.zip` (members holding JSON arrays) and plain `.jsonl`, plus a truncated copy of one gzip.
struct ArchiveBuilder {
    /// A container could not be written: which file and why.
    struct BuildError: Error, CustomStringConvertible {
        var description: String
    }

    let archives: URL
    let seed: UInt64
    /// At most this many lines per gzip member of a daily file (log shippers flush in chunks); small days
    /// still get about four members, so every daily file is a multi-member stream.
    let maxLinesPerMember = 50

    /// Modification time written into tar and zip members (fixed, so output is byte-identical).
    private static let fixedDate = Date(timeIntervalSince1970: 1_704_067_200)

    /// For each daily file: the byte offset where each gzip member starts and the lines in it.
    private(set) var dailyMembers: [String: [(offset: Int, lines: Int)]] = [:]

    init(archives: URL, seed: UInt64) {
        self.archives = archives
        self.seed = seed
    }

    private func write(_ bytes: [UInt8], to relative: String) throws(BuildError) {
        let url = archives.appendingPathComponent(relative)
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: url)
        } catch {
            throw BuildError(description: "cannot write \(url.path): \(error)")
        }
    }

    /// Builds every container from `spool`.
    mutating func build(from spool: RecordSpool) throws(BuildError) {
        for key in spool.keys {
            let lines: [String]
            do { lines = try spool.lines(key) } catch { throw BuildError(description: error.description) }
            if key.hasPrefix("daily/") {
                try buildDaily(key, lines: lines)
            } else if key.hasSuffix(".tar.gz") {
                try buildTar(key, lines: lines)
            } else if key.hasSuffix(".zip") {
                try buildZip(key, lines: lines)
            } else {
                try write(Array((lines.joined(separator: "\n") + "\n").utf8), to: key)
            }
        }
    }

    /// Shuffled lines in gzip members of `linesPerMember` lines each.
    private mutating func buildDaily(_ key: String, lines: [String]) throws(BuildError) {
        var rng = SeededGenerator(seed: seed, stream: UInt64(truncatingIfNeeded: key.utf8.reduce(5381) { ($0 &* 33) &+ Int($1) }))
        var shuffled = lines
        shuffled.shuffle(using: &rng)
        var bytes: [UInt8] = []
        var members: [(offset: Int, lines: Int)] = []
        let linesPerMember = max(1, min(maxLinesPerMember, shuffled.count / 4))
        var index = 0
        while index < shuffled.count {
            let chunk = shuffled[index..<min(index + linesPerMember, shuffled.count)]
            members.append((bytes.count, chunk.count))
            do {
                bytes.append(contentsOf: try Gzip.member(Array((chunk.joined(separator: "\n") + "\n").utf8)))
            } catch {
                throw BuildError(description: "\(key): \(error)")
            }
            index += linesPerMember
        }
        dailyMembers[key] = members
        try write(bytes, to: key)
    }

    /// One tar member per line (`name<TAB>json`), gzipped members for names ending in `.gz`, the tar gzipped.
    private func buildTar(_ key: String, lines: [String]) throws(BuildError) {
        var tar = TarWriter()
        for line in lines {
            let bytes = Array(line.utf8)
            guard let tab = bytes.firstIndex(of: 0x09) else { continue }
            let name = String(decoding: bytes[..<tab], as: UTF8.self)
            var contents = Array(bytes[(tab + 1)...])
            if name.hasSuffix(".gz") {
                do { contents = try Gzip.member(contents) } catch { throw BuildError(description: "\(key): \(error)") }
            }
            tar.add(name: name, contents: contents, modified: 1_704_067_200)
        }
        do {
            try write(try Gzip.member(tar.finished), to: key)
        } catch let error as BuildError {
            throw error
        } catch {
            throw BuildError(description: "\(key): \(error)")
        }
    }

    /// Members named by each line's prefix (`name<TAB>json`), each holding a JSON array of its records.
    private func buildZip(_ key: String, lines: [String]) throws(BuildError) {
        var members: [String: [String]] = [:]
        for line in lines {
            let bytes = Array(line.utf8)
            guard let tab = bytes.firstIndex(of: 0x09) else { continue }
            members[String(decoding: bytes[..<tab], as: UTF8.self), default: []]
                .append(String(decoding: bytes[(tab + 1)...], as: UTF8.self))
        }
        let url = archives.appendingPathComponent(key)
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try? FileManager.default.removeItem(at: url)
            let archive = try Archive(url: url, accessMode: .create)
            for name in members.keys.sorted() {
                let data = Data(("[" + (members[name] ?? []).joined(separator: ",\n") + "]\n").utf8)
                try archive.addEntry(with: name, type: .file, uncompressedSize: Int64(data.count),
                                     modificationDate: ArchiveBuilder.fixedDate, compressionMethod: .deflate) { position, size in
                    data.subdata(in: Int(position)..<Int(position) + size)
                }
            }
        } catch {
            throw BuildError(description: "cannot write \(url.path): \(error)")
        }
    }

    /// Copies the daily file `key` to `damaged/`, cut five bytes into the header of its middle gzip member:
    /// every record of the members before the cut stays readable (and is a duplicate of the intact file's).
    /// Returns the number of readable records.
    func writeTruncatedCopy(of key: String) throws(BuildError) -> Int {
        guard let members = dailyMembers[key], members.count >= 2 else { return 0 }
        let cutMember = members.count / 2
        let url = archives.appendingPathComponent(key)
        let bytes: [UInt8]
        do { bytes = Array(try Data(contentsOf: url)) } catch { throw BuildError(description: "cannot read \(url.path): \(error)") }
        let cut = members[cutMember].offset + 5
        let name = "damaged/" + (key.split(separator: "/").last.map(String.init) ?? "damaged.ndjson.gz")
        try write(Array(bytes.prefix(cut)), to: name)
        return members[..<cutMember].reduce(0) { $0 + $1.lines }
    }
}

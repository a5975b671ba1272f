import Foundation
import Ingest
import Ledger

/// The quarantined lines an ingest may find completed (``QuarantinedTail``), by file, and the checks that tell a
/// file which grew since it was read (a log appended to) from one rewritten under the same path.
///
/// A file qualifies when it is larger than the version the manifest holds, begins with exactly that version's
/// bytes (the same SHA-256), and that version ended with the tail's bytes (the line had no end yet). Only then is
/// the record now read at the tail's line, longer and starting with those bytes, the same line completed.
struct CutLines: Sendable {
    private let byFile: [String: [QuarantinedTail]]

    init(_ tails: [QuarantinedTail]) {
        byFile = Dictionary(grouping: tails, by: \.provenance.file)
    }

    /// The tails the file at `path`, about to be read as `file`, may complete: by line, the key and the bytes.
    /// Empty when it has none or does not continue the version they were read from.
    func completable(in file: FileFingerprint, at path: InputPath,
                     decompressor: PayloadDecompressor) -> [Int64: (key: String, raw: [UInt8])] {
        guard let tails = byFile[file.path], let lastRead = tails.first?.lastRead, file.size > lastRead.size,
              (try? FileFingerprint.of(path, firstBytes: lastRead.size)) == lastRead,
              let reader = TailReader(path) else { return [:] }
        var completable: [Int64: (key: String, raw: [UInt8])] = [:]
        for tail in tails {
            guard let raw = decompressor.decompress(tail.payload.bytes, dictionaryId: tail.payload.dictionaryId),
                  Int64(raw.count) <= lastRead.size,
                  reader.bytes(at: lastRead.size - Int64(raw.count), count: raw.count) == raw else { continue }
            completable[tail.provenance.position] = (tail.key, raw)
        }
        return completable
    }

    /// The key of the tail `record` completes, among `completable`: at its line, longer, starting with its bytes.
    static func completed(by record: RawRecord, in completable: [Int64: (key: String, raw: [UInt8])]) -> String? {
        guard record.provenance.member == nil, let tail = completable[record.provenance.position],
              record.bytes.count > tail.raw.count, record.bytes.starts(with: tail.raw) else { return nil }
        return tail.key
    }
}

/// Reads bytes of a file by position, for ``CutLines``.
private struct TailReader {
    private let handle: FileHandle

    init?(_ path: InputPath) {
        guard let handle = FileHandle(forReadingAtPath: path.description) else { return nil }
        self.handle = handle
    }

    /// `count` bytes at `offset`; `nil` when fewer are there.
    func bytes(at offset: Int64, count: Int) -> [UInt8]? {
        guard (try? handle.seek(toOffset: UInt64(offset))) != nil, let data = try? handle.read(upToCount: count),
              data.count == count else { return count == 0 ? [] : nil }
        return Array(data)
    }
}

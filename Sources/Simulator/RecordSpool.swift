import Foundation

/// Collects records per output file in memory and appends them to spool files on disk whenever the buffers
/// grow past a limit, so a run of any size keeps bounded memory. `ArchiveBuilder` later turns each spool file
/// into its container.
struct RecordSpool {
    /// A spool failure: the file and what went wrong.
    struct SpoolError: Error, CustomStringConvertible {
        var description: String
    }

    let directory: URL
    private var buffers: [String: [UInt8]] = [:]
    private var bufferedBytes = 0
    private var written: Set<String> = []
    private let limit: Int

    init(directory: URL, limit: Int = 32 << 20) throws(SpoolError) {
        self.directory = directory
        self.limit = limit
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw SpoolError(description: "cannot create \(directory.path): \(error)")
        }
    }

    /// The output files (relative paths) that received records, sorted.
    var keys: [String] { Array(written.union(buffers.keys)).sorted() }

    /// Appends one line (no newline inside) for output file `key`.
    mutating func append(_ key: String, _ line: String) throws(SpoolError) {
        buffers[key, default: []].append(contentsOf: line.utf8)
        buffers[key, default: []].append(0x0A)
        bufferedBytes += line.utf8.count + 1
        if bufferedBytes > limit { try flush() }
    }

    private func spoolURL(_ key: String) -> URL {
        directory.appendingPathComponent(key.replacingOccurrences(of: "/", with: "__") + ".spool")
    }

    /// Writes every buffer to its spool file.
    mutating func flush() throws(SpoolError) {
        for (key, bytes) in buffers {
            let url = spoolURL(key)
            do {
                if !FileManager.default.fileExists(atPath: url.path) {
                    _ = FileManager.default.createFile(atPath: url.path, contents: nil)
                }
                let handle = try FileHandle(forWritingTo: url)
                try handle.seekToEnd()
                try handle.write(contentsOf: bytes)
                try handle.close()
            } catch {
                throw SpoolError(description: "cannot write spool \(url.path): \(error)")
            }
            written.insert(key)
        }
        buffers = [:]
        bufferedBytes = 0
    }

    /// The lines spooled for `key`, in the order they were appended (call after `flush()`).
    func lines(_ key: String) throws(SpoolError) -> [String] {
        do {
            let bytes = Array(try Data(contentsOf: spoolURL(key)))
            return bytes.split(separator: 0x0A, omittingEmptySubsequences: true).map { String(decoding: $0, as: UTF8.self) }
        } catch {
            throw SpoolError(description: "cannot read spool for \(key): \(error)")
        }
    }
}

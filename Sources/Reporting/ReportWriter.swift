import Foundation

/// Writes report files into a directory so that no file is ever half-written: every file is first written in
/// full to a hidden temporary file in the same directory, and only when all of them are written are they renamed
/// over the final names (each rename is atomic within a file system). When writing fails, the temporary files
/// are removed and the previous reports stay as they were. (Should a rename itself fail, the files renamed before
/// it are already the new ones; each file is still whole.)
///
/// A report killed while writing leaves its temporary files behind: each run first removes those of earlier
/// runs whose process is gone (the names say which process wrote them: `.<name>.<pid>-<UUID>.tmp`), and
/// nothing else.
public struct ReportWriter: Sendable {
    /// The output directory (`--out`); created when missing.
    public var directory: String

    /// A writer into `directory`.
    public init(directory: String) {
        self.directory = directory
    }

    /// Writes `files` (name, UTF-8 contents).
    public func write(_ files: [(name: String, contents: String)]) throws(ReportWriteError) {
        let manager = FileManager.default
        do {
            try manager.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw ReportWriteError(path: directory, reason: "cannot create the output directory (\((error as NSError).localizedDescription)); check that its parent exists and is writable, or give another --out")
        }
        removeStaleTemporaryFiles()
        let token = "\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString)"
        var written: [(temporary: String, final: String)] = []
        func cleanUp() {
            for file in written { try? manager.removeItem(atPath: file.temporary) }
        }
        for file in files {
            guard !file.name.isEmpty, !file.name.contains("/"), !file.name.hasPrefix(".") else {
                cleanUp()
                throw ReportWriteError(path: file.name, reason: "not a plain file name")
            }
            let final = (directory as NSString).appendingPathComponent(file.name)
            let temporary = (directory as NSString).appendingPathComponent(".\(file.name).\(token).tmp")
            do {
                try Data(file.contents.utf8).write(to: URL(fileURLWithPath: temporary))
            } catch {
                try? manager.removeItem(atPath: temporary)
                cleanUp()
                throw ReportWriteError(path: temporary, reason: "cannot write: \(error)")
            }
            written.append((temporary, final))
        }
        for (index, file) in written.enumerated() where rename(file.temporary, file.final) != 0 {
            let reason = String(cString: strerror(errno))
            for unrenamed in written[index...] { try? manager.removeItem(atPath: unrenamed.temporary) }
            throw ReportWriteError(path: file.final, reason: "cannot rename into place: \(reason)")
        }
    }
}

extension ReportWriter {
    /// Removes the temporary files of writers whose process no longer runs. Best effort: a file that cannot be
    /// removed stays, and the run goes on.
    func removeStaleTemporaryFiles() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names {
            guard let pid = Self.writerProcess(ofTemporaryFile: name), kill(pid, 0) != 0, errno == ESRCH else { continue }
            try? FileManager.default.removeItem(atPath: (directory as NSString).appendingPathComponent(name))
        }
    }

    /// The process id in a temporary file name this writer makes (`.<name>.<pid>-<UUID>.tmp`); `nil` for any
    /// other name.
    static func writerProcess(ofTemporaryFile name: String) -> pid_t? {
        guard name.hasPrefix("."), name.hasSuffix(".tmp") else { return nil }
        let parts = name.dropLast(4).split(separator: ".")
        guard parts.count >= 2, let token = parts.last else { return nil }
        guard let dash = token.firstIndex(of: "-"), let pid = pid_t(token[..<dash]), pid > 0,
              UUID(uuidString: String(token[token.index(after: dash)...])) != nil else { return nil }
        return pid
    }
}

/// A report file that could not be written: which path and why.
public struct ReportWriteError: Error, CustomStringConvertible, Sendable {
    public var path: String
    public var reason: String

    public var description: String { "\(path): \(reason)" }
}

import Foundation

/// Writes report files into a directory so that no file is ever half-written: every file is first written in
/// full to a hidden temporary file in the same directory, and only when all of them are written are they renamed
/// over the final names (each rename is atomic within a file system). When writing fails, the temporary files
/// are removed and the previous reports stay as they were. (Should a rename itself fail, the files renamed before
/// it are already the new ones; each file is still whole.)
///
/// Files are written with POSIX calls, so a failure carries its `errno` (``ReportWriteError/code``): the CLI
/// tells a folder the user named wrong (exit 2) from a full disk (exit 3).
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

    /// Creates the output directory when missing: `run` does it before a long ingest, so that an `--out` that
    /// cannot be made is said at once, not after the work.
    public func prepare() throws(ReportWriteError) {
        try Self.makeDirectory(directory)
    }

    /// Writes `files` (name, UTF-8 text).
    public func write(_ files: [(name: String, contents: String)]) throws(ReportWriteError) {
        try write(bytes: files.map { ($0.name, Array($0.contents.utf8)) })
    }

    /// Writes `files` (name, bytes).
    public func write(bytes files: [(name: String, contents: [UInt8])]) throws(ReportWriteError) {
        try prepare()
        removeStaleTemporaryFiles()
        let token = "\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString)"
        var written: [(temporary: String, final: String)] = []
        func cleanUp() {
            for file in written { unlink(file.temporary) }
        }
        for file in files {
            guard !file.name.isEmpty, !file.name.contains("/"), !file.name.hasPrefix(".") else {
                cleanUp()
                throw ReportWriteError(path: file.name, operation: .write, code: EINVAL)
            }
            let folder = directory.hasSuffix("/") ? directory : directory + "/"
            let final = folder + file.name
            let temporary = folder + ".\(file.name).\(token).tmp"
            do {
                try Self.writeFile(temporary, file.contents)
            } catch {
                unlink(temporary)
                cleanUp()
                throw ReportWriteError(path: final, operation: .write, code: error.code)
            }
            written.append((temporary, final))
        }
        for (index, file) in written.enumerated() where rename(file.temporary, file.final) != 0 {
            let code = errno
            for unrenamed in written[index...] { unlink(unrenamed.temporary) }
            throw ReportWriteError(path: file.final, operation: .rename, code: code)
        }
    }

    /// `mkdir -p`: creates `path` and its missing parents; an existing directory is fine.
    static func makeDirectory(_ path: String) throws(ReportWriteError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw ReportWriteError(path: path, operation: .createDirectory, code: ENOTDIR) }
            return
        }
        // The parent by the last `/` (Foundation's `deletingLastPathComponent` traps on some one-letter paths).
        var parent = Substring(path)
        while parent.hasSuffix("/") { parent = parent.dropLast() }
        if let slash = parent.lastIndex(of: "/") {
            let prefix = String(parent[..<slash])
            if !prefix.isEmpty, prefix != path { try makeDirectory(prefix) }
        }
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
            throw ReportWriteError(path: path, operation: .createDirectory, code: errno)
        }
    }

    /// Creates `path` (which must not exist) and writes `bytes` to it.
    private static func writeFile(_ path: String, _ bytes: [UInt8]) throws(ReportWriteError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw ReportWriteError(path: path, operation: .write, code: errno) }
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                let code = errno
                close(descriptor)
                throw ReportWriteError(path: path, operation: .write, code: code)
            }
            offset += count
        }
        guard close(descriptor) == 0 else { throw ReportWriteError(path: path, operation: .write, code: errno) }
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

/// A report file that could not be written: which path, what was being done, and the system's `errno`.
public struct ReportWriteError: Error, CustomStringConvertible, Sendable {
    /// What failed.
    public enum Operation: Sendable {
        /// Creating the output directory (or finding a file where it should be).
        case createDirectory
        /// Writing a report file (its temporary copy).
        case write
        /// Renaming a written file into place.
        case rename
    }

    public var path: String
    public var operation: Operation
    /// The POSIX error number (`ENOSPC`, `EACCES`, ...).
    public var code: Int32

    /// E.g. `Reports: cannot create the output folder: Permission denied`.
    public var description: String {
        let what = switch operation {
        case .createDirectory: code == ENOTDIR ? "is not a folder (or a part of its path is a file)" : "cannot create the output folder"
        case .write: "cannot write"
        case .rename: "cannot rename into place"
        }
        return code == ENOTDIR && operation == .createDirectory ? "\(path) \(what)" : "\(path): \(what): \(String(cString: strerror(code)))"
    }
}

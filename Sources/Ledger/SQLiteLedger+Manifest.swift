import Facts
import Foundation
import Ingest

extension SQLiteLedger {
    public func fileClaimer() throws(LedgerError) -> any FileClaimer {
        let statement = try prepared(LedgerSchema.doneFiles)
        var done: [FileFingerprint] = []
        while try statement.step() {
            done.append(FileFingerprint(path: statement.string(0), size: statement.int64(1), sha256: statement.string(2)))
        }
        return SnapshotFileClaimer(done: done)
    }

}

/// Claims for one run of a single-writer ledger: the manifest's `done` files as the run starts (only this run
/// writes the ledger now, under its lock) and the files this run has claimed so far. A file is read unless
/// its path is `done` with the same bytes, or the same bytes were read (or claimed in this run) under another
/// path: the same archive reached twice (a copy in `backup/`, a symlink, `./x` and `x`) is read once.
final class SnapshotFileClaimer: FileClaimer, @unchecked Sendable {
    private let lock = NSLock()
    /// Guarded by `lock`: the done paths' fingerprints, and SHA-256 → the first path with those bytes.
    private var done: Set<FileFingerprint>
    private var pathBySHA: [String: String] = [:]

    init(done: [FileFingerprint]) {
        self.done = Set(done)
        for file in done where pathBySHA[file.sha256] == nil { pathBySHA[file.sha256] = file.path }
    }

    func claim(_ file: FileFingerprint) -> FileClaim {
        lock.lock()
        defer { lock.unlock() }
        if done.contains(file) { return .unchanged }
        // Empty files all share one SHA-256 and hold nothing: never a copy of each other.
        if file.size > 0, let first = pathBySHA[file.sha256], first != file.path { return .copy(of: first) }
        pathBySHA[file.sha256] = file.path
        done.insert(file)
        return .read
    }
}

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

    public func beginFile(_ file: FileFingerprint) throws(LedgerError) {
        let statement = try prepared(LedgerSchema.beginFile)
        try statement.bind(1, file.path)
        try statement.bind(2, file.size)
        try statement.bind(3, file.sha256)
        try statement.bind(4, Self.now())
        try statement.run()
    }

    public func saveProgress(path: String, read: Int) throws(LedgerError) {
        let statement = try prepared(LedgerSchema.fileProgress)
        try statement.bind(1, read)
        try statement.bind(2, read)
        try statement.bind(3, path)
        try statement.run()
    }

    public func finishFile(_ file: FileFingerprint, counts: FileCounts, damage: Damage?) throws(LedgerError) {
        let statement = try prepared(LedgerSchema.finishFile)
        try statement.bind(1, counts.read)
        try statement.bind(2, counts.used)
        try statement.bind(3, counts.duplicate)
        try statement.bind(4, counts.excluded)
        try statement.bind(5, counts.quarantined)
        try statement.bind(6, damage?.offset)
        try statement.bind(7, damage?.reason)
        try statement.bind(8, Self.now())
        try statement.bind(9, file.path)
        try statement.run()
    }

    public func markUnreadable(path: String, reason: String) throws(LedgerError) {
        let statement = try prepared(LedgerSchema.markUnreadable)
        try statement.bind(1, reason)
        try statement.bind(2, path)
        try statement.run()
    }

    public func files() throws(LedgerError) -> [FileManifestEntry] {
        let statement = try prepared(LedgerSchema.listFiles)
        var entries: [FileManifestEntry] = []
        while try statement.step() {
            let path = statement.string(0)
            guard let state = FileManifestEntry.State(rawValue: statement.string(3)) else {
                throw LedgerError(kind: .corrupt, path: self.path, message: "file \(path) has an unknown state")
            }
            let counts = FileCounts(read: Int(statement.int64(4)), used: Int(statement.int64(5)),
                                    duplicate: Int(statement.int64(6)), excluded: Int(statement.int64(7)),
                                    quarantined: Int(statement.int64(8)))
            let damage = statement.optionalInt64(9).map {
                Damage(file: path, offset: $0, reason: statement.optionalString(10) ?? "")
            }
            entries.append(FileManifestEntry(
                fingerprint: FileFingerprint(path: path, size: statement.int64(1), sha256: statement.string(2)),
                state: state, counts: counts, damage: damage, ingestedAt: statement.int64(11)))
        }
        return entries
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

import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The exclusive right to write one SQLite ledger (ingest, reprocess): an `flock` on `<db>.lock`.
///
/// SQLite alone would serialise two writers transaction by transaction, interleaving two ingests' files and
/// their manifest rows; the lock makes a second writer wait for the first to finish instead. The kernel drops
/// the lock when its process dies, so a killed ingest never leaves a stale lock behind. The lock file itself
/// is never deleted (deleting it would let two processes lock two different files).
public final class SQLiteWriteLock: LedgerLock {
    private var descriptor: Int32

    /// Takes the lock, waiting up to `timeout`; throws `.busy` naming the database when it stays taken.
    public init(databasePath: String, timeout: Duration) throws(LedgerError) {
        let lockPath = databasePath + ".lock"
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw LedgerError(kind: .unreadableFile, path: lockPath,
                              message: "cannot create the ledger's lock file: \(String(cString: strerror(errno)))")
        }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, clock.now < deadline else {
                close(descriptor)
                throw LedgerError(kind: .busy, path: databasePath,
                                  message: "another ingest or reprocess is writing \(databasePath); wait for it or use another --db")
            }
            usleep(100_000)
        }
        self.descriptor = descriptor
    }

    /// Releases the lock now (it is also released on deinit and when the process ends).
    public func release() {
        guard descriptor >= 0 else { return }
        flock(descriptor, LOCK_UN)
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}

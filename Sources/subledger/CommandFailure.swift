import ArgumentParser
import Foundation
import Ledger
import Pipeline
import Reporting
import Simulator

/// A failure with the exit code `cli.md` gives it and a message in the user's terms: the file, the option, what
/// to do; never a Foundation error domain or SQL. `detail` keeps what a maintainer needs (the statement that
/// failed, the library's own words) for the debug log (`--log-level debug`).
///
/// This file is the one place that turns the errors of every stage into messages and exit codes:
/// - 2, usage or configuration: a bad option, a missing, unreadable, damaged, foreign or newer database, a ledger
///   that needs `reprocess`, a folder or file named on the command line that cannot be used (missing, read-only,
///   not a folder), a database server that refuses the user or has no such database;
/// - 3, could not finish for a cause outside the input: a full disk, an I/O error, a lock held by another
///   process, a database server gone; nothing half-written stays.
struct CommandFailure: Error {
    var message: String
    var exitCode: ExitCode
    /// Technical context for the debug log; never shown at the default level.
    var detail: String?

    /// Exit 2: the command line or a configuration file is wrong.
    static func usage(_ message: String, detail: String? = nil) -> CommandFailure {
        CommandFailure(message: message, exitCode: ExitCode(2), detail: detail)
    }

    /// Exit 3: the work could not be finished; nothing half-written stays.
    static func couldNotFinish(_ message: String, detail: String? = nil) -> CommandFailure {
        CommandFailure(message: message, exitCode: ExitCode(3), detail: detail)
    }
}

extension CommandFailure {
    /// A ledger failure: what the user must fix (a missing, foreign, newer, stale, damaged or read-only ledger, a
    /// folder that does not exist) is 2; a full disk, an I/O error, a lock or a server gone is 3.
    static func ledger(_ error: LedgerError) -> CommandFailure {
        let detail = [error.detail, error.kind.isEngineFailure ? error.message : nil].compactMap { $0 }.joined(separator: "; ")
        let place = error.path
        switch error.kind {
        case .notFound, .foreign, .newerLedger, .needsReprocess, .unreadableFile, .damaged:
            return .usage(error.description, detail: error.detail)
        case .corrupt:
            return .usage("\(place): the ledger is damaged (\(error.message)); restore it from a backup, or ingest the archives again into a new --db",
                          detail: error.detail)
        case .busy:
            return .couldNotFinish(error.description, detail: error.detail)
        case .unavailable:
            return .couldNotFinish(error.description, detail: error.detail)
        case .server(let state):
            // SQLSTATE classes 28 (invalid authorization) and 3D (no such database), 42501 (insufficient privilege):
            // the URL or the account is wrong, which no retry fixes.
            if state.hasPrefix("28") || state.hasPrefix("3D") || state == "42501" {
                return .usage("\(error.description); check the user, password and database name of --db", detail: error.detail)
            }
            return .couldNotFinish(error.description, detail: error.detail)
        case .sqlite(let code):
            return sqlite(code, path: place, detail: detail)
        }
    }

    /// SQLite's result code (primary part of the extended code) in the user's terms.
    private static func sqlite(_ code: Int32, path: String, detail: String) -> CommandFailure {
        switch code & 0xFF {
        case 13: // SQLITE_FULL
            return .couldNotFinish("\(path): the disk holding the ledger is full; free some space and run the command again (nothing half-written stays)",
                                   detail: detail)
        case 10: // SQLITE_IOERR
            return .couldNotFinish("\(path): an I/O error while reading or writing the ledger (a failing disk or network file system); check the disk and run the command again",
                                   detail: detail)
        case 5, 6: // SQLITE_BUSY, SQLITE_LOCKED
            return .couldNotFinish("\(path): the ledger is locked by another process; run the command again once it is done",
                                   detail: detail)
        case 7: // SQLITE_NOMEM
            return .couldNotFinish("\(path): out of memory while working on the ledger", detail: detail)
        case 8: // SQLITE_READONLY
            return .usage("\(path): the ledger is read-only for this user (the file or its folder); fix the permissions or give --db a writable file",
                          detail: detail)
        case 14: // SQLITE_CANTOPEN
            return .usage("\(path): cannot open the ledger file: its folder does not exist or this user may not open files there; give --db a file in an existing folder",
                          detail: detail)
        case 3, 23: // SQLITE_PERM, SQLITE_AUTH
            return .usage("\(path): permission denied on the ledger file; fix its permissions or give --db another file", detail: detail)
        case 26: // SQLITE_NOTADB
            return .usage("\(path): not a subledger ledger (not a database at all); nothing was changed: give --db a ledger or a new file",
                          detail: detail)
        default:
            return .couldNotFinish("\(path): the ledger's database failed (SQLite result code \(code)); run the command again",
                                   detail: detail)
        }
    }

    /// An ingest or reprocess failure.
    static func ingest(_ error: IngestError) -> CommandFailure {
        switch error {
        case .input(let message): .usage(message)
        case .configuration(let error), .busy(let error), .ledger(let error): ledger(error)
        }
    }

    /// A report failure: an empty or stale ledger is a usage problem, the ledger and the output folder are
    /// mapped as such.
    static func report(_ error: ReportJobError) -> CommandFailure {
        switch error {
        case .emptyLedger, .stale, .partial: .usage(error.description)
        case .ledger(let failure): ledger(failure)
        case .write(let failure): file(failure.description, code: failure.code, advice: "give another --out")
        }
    }

    /// A simulation that could not be written.
    static func simulation(_ error: Simulation.SimulationError) -> CommandFailure {
        guard let underlying = error.underlying else { return .couldNotFinish(error.description) }
        guard let code = posixCode(of: underlying) else {
            return .couldNotFinish(error.description + ": an unexpected error", detail: String(describing: underlying))
        }
        return file(error.description + ": " + String(cString: strerror(code)), code: code, advice: "give another --out")
    }

    /// A file or folder the command writes could not be written: a full disk or an I/O error is 3, anything
    /// else (missing folder, permissions, read-only file system, a file where a folder should be) is the
    /// command line's (2). `message` already names the path and the system's words.
    static func file(_ message: String, code: Int32, advice: String) -> CommandFailure {
        switch code {
        case ENOSPC, EDQUOT, EIO: .couldNotFinish(message)
        default: .usage(message + "; " + advice)
        }
    }

    /// Any other error: the command did not finish. Foundation errors are said in the system's words.
    static func unexpected(_ error: any Error) -> CommandFailure {
        if let code = posixCode(of: error) {
            return .couldNotFinish(String(cString: strerror(code)), detail: String(describing: error))
        }
        return .couldNotFinish("an unexpected error stopped the command", detail: String(describing: error))
    }

    /// The POSIX error number behind a Foundation or POSIX error, when there is one.
    static func posixCode(of error: any Error) -> Int32? {
        if let posix = error as? POSIXError { return posix.code.rawValue }
        let bridged = error as NSError
        if bridged.domain == NSPOSIXErrorDomain { return Int32(bridged.code) }
        if let underlying = bridged.userInfo[NSUnderlyingErrorKey] as? any Error { return posixCode(of: underlying) }
        guard bridged.domain == NSCocoaErrorDomain else { return nil }
        switch CocoaError.Code(rawValue: bridged.code) {
        case .fileNoSuchFile, .fileReadNoSuchFile: return ENOENT
        case .fileWriteNoPermission, .fileReadNoPermission: return EACCES
        case .fileWriteOutOfSpace: return ENOSPC
        case .fileWriteVolumeReadOnly: return EROFS
        case .fileWriteFileExists: return EEXIST
        default: return nil
        }
    }
}

extension LedgerError.Kind {
    /// Whether the message is the database engine's own text (kept for the debug log, replaced for users).
    fileprivate var isEngineFailure: Bool {
        if case .sqlite = self { return true }
        return false
    }
}

import Foundation
import SystemSQLite

/// One open SQLite database connection (C API). Owns the handle; closes it on deinit. Not thread-safe:
/// one connection per thread, as SQLite's default threading mode expects.
final class SQLiteConnection {
    let handle: OpaquePointer
    let path: String

    /// Opens `path`; with `create` the file is created when missing, else a missing file is `.notFound`.
    init(path: String, create: Bool, readOnly: Bool) throws(LedgerError) {
        if !create && !FileManager.default.fileExists(atPath: path) {
            throw LedgerError(kind: .notFound, path: path, message: "no ledger database here; run `subledger ingest` first")
        }
        var flags = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE
        if create && !readOnly { flags |= SQLITE_OPEN_CREATE }
        var opened: OpaquePointer?
        let code = sqlite3_open_v2(path, &opened, flags | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let opened else {
            let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            if let opened { sqlite3_close_v2(opened) }
            throw Self.failure(code, path: path, message: "cannot open database: \(message)")
        }
        self.handle = opened
        self.path = path
        sqlite3_extended_result_codes(opened, 1)
    }

    deinit { sqlite3_close_v2(handle) }

    /// Runs one or more statements that return no rows (schema, pragmas, transaction control).
    func execute(_ sql: String) throws(LedgerError) {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        if code != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(message)
            throw Self.failure(code, path: path, message: "\(text) (while running \(sql.prefix(80)))")
        }
    }

    /// Waits up to `milliseconds` for another connection's lock instead of failing at once with SQLITE_BUSY.
    func setBusyTimeout(milliseconds: Int32) {
        sqlite3_busy_timeout(handle, milliseconds)
    }

    func prepare(_ sql: String) throws(LedgerError) -> SQLiteStatement {
        try SQLiteStatement(connection: self, sql: sql)
    }

    func error(_ code: Int32, context: String) -> LedgerError {
        let text = String(cString: sqlite3_errmsg(handle))
        return Self.failure(code, path: path, message: "\(text) (\(context))")
    }

    /// The error for an SQLite result code: `SQLITE_CORRUPT` (a broken page met while reading or writing) is
    /// ``LedgerError/Kind/damaged``, with how to recover; anything else keeps its code.
    static func failure(_ code: Int32, path: String, message: String) -> LedgerError {
        if code & 0xFF == SQLITE_CORRUPT {
            let found = String(cString: sqlite3_errstr(code))
            return LedgerError(kind: .damaged, path: path, message: "the ledger is damaged (SQLite: \(found))" + SQLiteLedger.recovery(path))
        }
        return LedgerError(kind: .sqlite(code: code), path: path, message: message)
    }
}

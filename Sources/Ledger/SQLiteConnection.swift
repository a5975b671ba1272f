import Foundation
import Ingest
import SystemSQLite

/// One open SQLite database connection (C API). Owns the handle; closes it on deinit. Not thread-safe:
/// one connection per thread, as SQLite's default threading mode expects.
final class SQLiteConnection {
    let handle: OpaquePointer
    let path: String

    /// How a connection opens its file.
    enum OpenMode {
        /// Read and write; the file is created when missing.
        case readWrite
        /// Read only; a missing file is `.notFound`. In a folder this process cannot write to, SQLite could not
        /// create the WAL index beside the database, so the file is opened `immutable` there: nothing can be
        /// writing to it (no writer could create its own WAL in that folder either).
        case readOnly
    }

    init(path: String, mode: OpenMode) throws(LedgerError) {
        if mode == .readOnly {
            guard FileManager.default.fileExists(atPath: path) else {
                throw LedgerError(kind: .notFound, path: path, message: "no ledger database here; run `subledger ingest` first")
            }
        }
        var flags = mode == .readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        var name = path
        if mode == .readOnly && InputPath(path).folder.withCString({ access($0, W_OK) }) != 0 {
            flags |= SQLITE_OPEN_URI
            name = "file:" + Self.uriPath(path) + "?immutable=1"
        }
        var opened: OpaquePointer?
        let code = sqlite3_open_v2(name, &opened, flags | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let opened else {
            let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            if let opened { sqlite3_close_v2(opened) }
            throw Self.failure(code, path: path, message: "cannot open the ledger: \(message)")
        }
        self.handle = opened
        self.path = path
        sqlite3_extended_result_codes(opened, 1)
    }

    /// `path` as the path of a `file:` URI: `%`, `?` and `#` escaped.
    private static func uriPath(_ path: String) -> String {
        var result = ""
        for character in path.unicodeScalars {
            switch character {
            case "%": result += "%25"
            case "?": result += "%3f"
            case "#": result += "%23"
            default: result.unicodeScalars.append(character)
            }
        }
        return result
    }

    deinit { sqlite3_close_v2(handle) }

    /// Runs one or more statements that return no rows (schema, pragmas, transaction control).
    func execute(_ sql: String) throws(LedgerError) {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        if code != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(message)
            throw Self.failure(code, path: path, message: text, detail: "while running \(sql.prefix(200))")
        }
    }

    /// Waits up to `milliseconds` for another connection's lock instead of failing at once with SQLITE_BUSY.
    func setBusyTimeout(milliseconds: Int32) {
        sqlite3_busy_timeout(handle, milliseconds)
    }

    func prepare(_ sql: String) throws(LedgerError) -> SQLiteStatement {
        try SQLiteStatement(connection: self, sql: sql)
    }

    /// The error of a failed call: SQLite's own message, with `context` (the statement) kept as the detail.
    func error(_ code: Int32, context: String) -> LedgerError {
        let text = String(cString: sqlite3_errmsg(handle))
        return Self.failure(code, path: path, message: text, detail: context)
    }

    /// The error for an SQLite result code: `SQLITE_CORRUPT` (a broken page met while reading or writing) is
    /// ``LedgerError/Kind/damaged``, with how to recover; anything else keeps its code. `detail` (SQLite's words
    /// and the statement) is for the log, never the message (`cli.md`: no SQL in messages).
    static func failure(_ code: Int32, path: String, message: String, detail: String? = nil) -> LedgerError {
        if code & 0xFF == SQLITE_CORRUPT {
            let found = "SQLite: " + String(cString: sqlite3_errstr(code))
            return LedgerError(kind: .damaged, path: path, message: "the ledger is damaged (a page of its file is unreadable)"
                               + SQLiteLedger.recovery(path), detail: [found, detail].compactMap { $0 }.joined(separator: "; "))
        }
        return LedgerError(kind: .sqlite(code: code), path: path, message: message, detail: detail)
    }
}

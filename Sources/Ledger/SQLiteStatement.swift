import Foundation
import SystemSQLite

/// A prepared SQLite statement, prepared once and reused (`reset` + `bind`) for every row it writes or reads.
///
/// Not thread-safe, like the connection that owns it. Parameters are 1-based, as in SQLite.
final class SQLiteStatement {
    private let handle: OpaquePointer
    private let connection: SQLiteConnection
    let sql: String

    init(connection: SQLiteConnection, sql: String) throws(LedgerError) {
        var prepared: OpaquePointer?
        let code = sqlite3_prepare_v2(connection.handle, sql, -1, &prepared, nil)
        guard code == SQLITE_OK, let prepared else {
            throw connection.error(code, context: "preparing \(sql.prefix(200))")
        }
        self.handle = prepared
        self.connection = connection
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    /// Clears the previous execution and its bindings; call before binding a new row.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    func bind(_ index: Int32, _ value: String?) throws(LedgerError) {
        guard let value else { return try check(sqlite3_bind_null(handle, index)) }
        // SQLITE_TRANSIENT: SQLite copies the bytes, the Swift string's buffer is only borrowed for the call. A
        // native string lends its UTF-8 in place; passing the String itself made a C copy of it for every bind.
        // The text ends at its first NUL, as when it was passed as a C string: ledgers written before keep their
        // keys. An empty string is bound as text of length 0 (a NULL pointer would bind SQL NULL).
        var text = value
        let code = text.withUTF8 { utf8 -> Int32 in
            guard let start = utf8.baseAddress, !utf8.isEmpty else {
                return sqlite3_bind_text(handle, index, "", 0, SQLiteStatement.transient)
            }
            let length = utf8.firstIndex(of: 0) ?? utf8.count
            return start.withMemoryRebound(to: CChar.self, capacity: utf8.count) {
                sqlite3_bind_text(handle, index, $0, Int32(length), SQLiteStatement.transient)
            }
        }
        try check(code)
    }

    /// Binds `text`, bytes another statement's ``textBytes(_:)`` lent (SQLite copies them).
    func bind(_ index: Int32, text: UnsafeRawBufferPointer) throws(LedgerError) {
        guard let start = text.baseAddress, !text.isEmpty else {
            return try check(sqlite3_bind_text(handle, index, "", 0, SQLiteStatement.transient))
        }
        try check(sqlite3_bind_text(handle, index, start.assumingMemoryBound(to: CChar.self), Int32(text.count),
                                    SQLiteStatement.transient))
    }

    func bind(_ index: Int32, _ value: Int64?) throws(LedgerError) {
        guard let value else { return try check(sqlite3_bind_null(handle, index)) }
        try check(sqlite3_bind_int64(handle, index, value))
    }

    func bind(_ index: Int32, _ value: Int) throws(LedgerError) {
        try check(sqlite3_bind_int64(handle, index, Int64(value)))
    }

    func bind(_ index: Int32, blob: ArraySlice<UInt8>) throws(LedgerError) {
        if blob.isEmpty { return try check(sqlite3_bind_zeroblob(handle, index, 0)) }
        let code = blob.withUnsafeBytes { buffer in
            sqlite3_bind_blob(handle, index, buffer.baseAddress, Int32(buffer.count), SQLiteStatement.transient)
        }
        try check(code)
    }

    /// Executes a statement that returns no rows.
    func run() throws(LedgerError) {
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE || code == SQLITE_ROW else {
            throw connection.error(code, context: "running \(sql.prefix(200))")
        }
    }

    /// Advances to the next row; `false` when there are no more.
    func step() throws(LedgerError) -> Bool {
        let code = sqlite3_step(handle)
        if code == SQLITE_ROW { return true }
        if code == SQLITE_DONE { return false }
        throw connection.error(code, context: "reading \(sql.prefix(200))")
    }

    /// Number of rows the last `run()` changed.
    var changes: Int { Int(sqlite3_changes(connection.handle)) }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func optionalInt64(_ column: Int32) -> Int64? { isNull(column) ? nil : int64(column) }

    func string(_ column: Int32) -> String {
        guard let text = sqlite3_column_text(handle, column) else { return "" }
        return String(cString: text)
    }

    func optionalString(_ column: Int32) -> String? { isNull(column) ? nil : string(column) }

    /// The column's text as SQLite holds it, not copied: valid until the statement steps or resets (read other
    /// columns freely, never this one as another type). `nil` for NULL.
    func textBytes(_ column: Int32) -> UnsafeRawBufferPointer? {
        guard let text = sqlite3_column_text(handle, column) else { return nil }
        return UnsafeRawBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, column)))
    }

    func blob(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let bytes = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    private func check(_ code: Int32) throws(LedgerError) {
        guard code == SQLITE_OK else { throw connection.error(code, context: "binding \(sql.prefix(200))") }
    }

    private static var transient: sqlite3_destructor_type { unsafeBitCast(-1, to: sqlite3_destructor_type.self) }
}

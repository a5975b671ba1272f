import Foundation
import Logging
import NIOCore
import PostgresNIO

/// One connection to a PostgreSQL ledger, used synchronously: the pipeline's stages are threads, and each one that
/// talks to the ledger owns a session. Every call blocks its thread until the server answered (the connection's
/// own event loop does the I/O), which is what a stage thread wants and never a thread of Swift's cooperative
/// pool.
///
/// Statements are written with SQLite's `?` placeholders (``LedgerSchema`` is shared by both engines);
/// ``query(_:_:)`` numbers them (`$1`, `$2`, ...) before sending.
final class PostgresSession: @unchecked Sendable {
    let location: PostgresLocation
    private let connection: PostgresConnection
    private let logger: Logger
    /// The statement ``send(_:)`` started and nobody has waited for yet: every statement after it waits for it
    /// first, since each runs on a task of its own and tasks start in no particular order.
    private var sent: Running<[PostgresRow]>?

    /// Connects to `location`; a server that cannot be reached is ``LedgerError/Kind/unavailable``.
    init(_ location: PostgresLocation) throws(LedgerError) {
        self.location = location
        var quiet = Logger(label: "subledger.postgres")
        quiet.logLevel = .critical
        let logger = quiet
        self.logger = logger
        let configuration = location.configuration
        do {
            connection = try Self.blocking {
                try await PostgresConnection.connect(configuration: configuration, id: Int.random(in: 1...Int.max),
                                                     logger: logger)
            }
        } catch {
            throw Self.ledgerError(error, location: location, doing: "connecting")
        }
    }

    /// Closes the connection (postgres-nio requires it before a connection is released).
    deinit {
        let connection = connection
        guard !connection.isClosed else { return }
        // Closing a connection the server is dropping may never finish either: give it two seconds.
        _ = try? Self.blocking(timeout: .seconds(2)) { try await connection.close() }
    }

    /// Runs `sql` with `values` bound to its `?` placeholders, in order, and returns every row.
    @discardableResult
    func query(_ sql: String, _ values: [SQLValue] = []) throws(LedgerError) -> [PostgresResultRow] {
        try requireOpen(doing: "running a statement")
        let query = PostgresQuery(unsafeSQL: PostgresSQL.numbered(sql), binds: SQLValue.bindings(values))
        let connection = connection
        let logger = logger
        do {
            return try onConnection(doing: "running a statement") {
                try await connection.query(query, logger: logger).collect()
            }.map(PostgresResultRow.init)
        } catch let error as LedgerError {
            throw error
        } catch {
            throw Self.ledgerError(error, location: location, doing: "running a statement", statement: sql)
        }
    }

    /// Sends `sql` and returns at once: ``PendingRows/rows()`` waits for its rows. A reader folds one page of a
    /// cursor while the server makes the next (``PostgresLedger/eachRow(_:_:_:)``). Any statement after it on
    /// this session (a ``query(_:_:)``, a ``copy(into:columns:rows:)``, another send) first waits for it to end,
    /// so the server sees them in the order they were asked for.
    func send(_ sql: String) throws(LedgerError) -> PendingRows {
        settleSent()
        try requireOpen(doing: "running a statement")
        let query = PostgresQuery(unsafeSQL: PostgresSQL.numbered(sql), binds: PostgresBindings())
        let connection = connection
        let logger = logger
        let running = Running { try await connection.query(query, logger: logger).collect() }
        sent = running
        return PendingRows(session: self, sql: sql, running: running)
    }

    /// Waits for the statement ``send(_:)`` started, if nobody has; its failure is left to its ``PendingRows``.
    private func settleSent() {
        guard let running = sent else { return }
        sent = nil
        let connection = connection
        _ = try? running.wait(abandonWhen: { connection.isClosed })
    }

    /// A statement sent by ``send(_:)``, its rows still to come.
    struct PendingRows {
        fileprivate let session: PostgresSession
        fileprivate let sql: String
        fileprivate let running: Running<[PostgresRow]>

        /// Waits for the statement's rows (or why it failed, as ``query(_:_:)`` says it).
        func rows() throws(LedgerError) -> [PostgresResultRow] {
            let connection = session.connection
            defer { if session.sent === running { session.sent = nil } }
            do {
                return try running.wait(abandonWhen: { connection.isClosed }).map(PostgresResultRow.init)
            } catch is Abandoned {
                throw session.lost(doing: "running a statement")
            } catch let error as LedgerError {
                throw error
            } catch {
                throw PostgresSession.ledgerError(error, location: session.location, doing: "running a statement",
                                                  statement: sql)
            }
        }
    }

    /// Streams `rows` (text, one COPY row per element, columns separated by tabs) into `table`'s `columns`.
    func copy(into table: String, columns: [String], rows: [UInt8]) throws(LedgerError) {
        try requireOpen(doing: "copying into \(table)")
        let connection = connection
        let logger = logger
        do {
            try onConnection(doing: "copying into \(table)") {
                try await connection.copyFrom(table: table, columns: columns, logger: logger) { writer in
                    var buffer = ByteBuffer()
                    buffer.writeBytes(rows)
                    try await writer.write(buffer)
                }
            }
        } catch let error as LedgerError {
            throw error
        } catch {
            throw Self.ledgerError(error, location: location, doing: "copying into \(table)")
        }
    }

    /// Fails at once when the server closed the connection (stopped, restarted, network gone): postgres-nio 1.33
    /// never answers a query written to a closed connection, so one must not be sent.
    private func requireOpen(doing: String) throws(LedgerError) {
        guard connection.isClosed else { return }
        throw lost(doing: doing)
    }

    fileprivate func lost(doing: String) -> LedgerError {
        LedgerError(kind: .unavailable, path: location.description,
                    message: "the connection to the PostgreSQL server was lost (\(doing)); run the command again once the server is back")
    }

    /// Runs `operation` (a statement on this session's connection) and stops waiting when the connection closes
    /// under it: the server stopped between ``requireOpen(doing:)`` and the statement reaching it, and
    /// postgres-nio 1.33 then never answers (an ingest hung for good on a server killed mid-run).
    private func onConnection<T: Sendable>(doing: String, _ operation: @escaping @Sendable () async throws -> T) throws -> T {
        settleSent()
        let connection = connection
        do {
            return try Self.blocking(abandonWhen: { connection.isClosed }, operation)
        } catch is Abandoned {
            throw lost(doing: doing)
        }
    }

    /// Runs an `async` operation to its end on a thread that may block (a stage thread, never the cooperative
    /// pool's), waiting on a semaphore in half-second slices. It stops waiting (throwing ``Abandoned``) once
    /// `timeout` has passed, or once `abandonWhen` has held for two slices in a row (the operation gets one
    /// more slice to answer); the operation is then left to end on its own.
    static func blocking<T: Sendable>(timeout: DispatchTimeInterval? = nil, abandonWhen: (@Sendable () -> Bool)? = nil,
                                      _ operation: @escaping @Sendable () async throws -> T) throws -> T {
        try Running(operation).wait(timeout: timeout, abandonWhen: abandonWhen)
    }

    /// A server's error in the user's terms: what failed, the server's own message, never SQL (`statement`, the
    /// SQL that failed, and the driver's own error go to ``LedgerError/detail``).
    static func ledgerError(_ error: any Error, location: PostgresLocation, doing: String, statement: String? = nil) -> LedgerError {
        var result = userError(error, location: location, doing: doing)
        result.detail = [statement.map { "while running \($0.prefix(200))" }, String(describing: error)]
            .compactMap { $0 }.joined(separator: "; ")
        return result
    }

    private static func userError(_ error: any Error, location: PostgresLocation, doing: String) -> LedgerError {
        guard let error = error as? PSQLError else {
            return LedgerError(kind: .unavailable, path: location.description,
                               message: "the PostgreSQL server cannot be reached (\(doing))")
        }
        switch error.code {
        case .server:
            let state = error.serverInfo?[.sqlState] ?? ""
            let message = error.serverInfo?[.message] ?? "an error"
            // Class 08: connection exceptions; 57P: the server is shutting down or was restarted.
            let kind: LedgerError.Kind = state.hasPrefix("08") || state.hasPrefix("57P") ? .unavailable : .server(state: state)
            return LedgerError(kind: kind, path: location.description, message: "the PostgreSQL server said: \(message)")
        case .connectionError where doing == "connecting":
            return LedgerError(kind: .unavailable, path: location.description,
                               message: "cannot reach the PostgreSQL server; check the host and port of --db and that the server runs, then run the command again")
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown:
            return LedgerError(kind: .unavailable, path: location.description,
                               message: "the connection to the PostgreSQL server was lost (\(doing)); run the command again once the server is back")
        default:
            return LedgerError(kind: .unavailable, path: location.description,
                               message: "the PostgreSQL server failed (\(doing)): \(error.code)")
        }
    }
}

/// ``PostgresSession/blocking(timeout:abandonWhen:_:)`` stopped waiting before its operation ended.
struct Abandoned: Error {}

/// An `async` operation started on a task, and its result carried to the thread that waits for it; the semaphore
/// orders the write before the read.
final class Running<Value: Sendable>: @unchecked Sendable {
    private var result: Result<Value, any Error>?
    private let done = DispatchSemaphore(value: 0)

    /// Starts `operation` now.
    init(_ operation: @escaping @Sendable () async throws -> Value) {
        Task {
            do { self.result = .success(try await operation()) } catch { self.result = .failure(error) }
            self.done.signal()
        }
    }

    /// Waits for the operation's result on a thread that may block (a stage thread, never the cooperative
    /// pool's), in half-second slices. Stops waiting (throwing ``Abandoned``) once `timeout` has passed, or once
    /// `abandonWhen` has held for two slices in a row (the operation gets one more slice to answer); the
    /// operation is then left to end on its own. Once it has ended, every wait returns its result at once.
    func wait(timeout: DispatchTimeInterval? = nil, abandonWhen: (@Sendable () -> Bool)? = nil) throws -> Value {
        let deadline = timeout.map { DispatchTime.now() + $0 }
        var abandonedSlices = 0
        while done.wait(timeout: .now() + .milliseconds(500)) == .timedOut {
            if let deadline, DispatchTime.now() >= deadline { throw Abandoned() }
            abandonedSlices = abandonWhen?() == true ? abandonedSlices + 1 : 0
            if abandonedSlices > 1 { throw Abandoned() }
        }
        done.signal()
        guard let result else { preconditionFailure("the operation finished without a result") }
        return try result.get()
    }
}

extension SQLValue {
    static func bindings(_ values: [SQLValue]) -> PostgresBindings {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values {
            switch value {
            case .text(let text): bindings.append(text)
            case .integer(let integer): bindings.append(integer)
            case .bytes(let bytes): bindings.append(bytes.map { ByteBuffer(bytes: $0) })
            }
        }
        return bindings
    }
}

/// SQL text for PostgreSQL.
enum PostgresSQL {
    /// A statement creating a temporary table, with its text columns compared in byte order.
    static func temporary(_ statement: String) -> String {
        SQLDialect.postgres.render(statement)
    }

    /// `sql` with each `?` outside quotes numbered `$1`, `$2`, ... in order.
    static func numbered(_ sql: String) -> String {
        var result = ""
        result.reserveCapacity(sql.utf8.count + 16)
        var number = 0
        var quoted = false
        for character in sql {
            if character == "'" { quoted.toggle() }
            if character == "?" && !quoted {
                number += 1
                result += "$\(number)"
            } else {
                result.append(character)
            }
        }
        return result
    }
}


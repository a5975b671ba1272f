import Foundation
import NIOSSL
import PostgresNIO

/// Where a PostgreSQL ledger lives: a `postgres://` or `postgresql://` URL in libpq's form,
/// `postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=MODE`. The password comes from the URL, else from
/// `$PGPASSWORD`; a `host` query parameter (or a host starting with `/`) names a Unix socket folder; `sslmode`
/// `disable`, `prefer` (the default, as libpq's), `require` (encrypted, certificate not checked) or
/// `verify-full` (certificate and host name checked).
public struct PostgresLocation: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var user: String
    public var password: String?
    public var database: String
    /// A Unix socket folder instead of TCP (the server's socket is `<folder>/.s.PGSQL.<port>`).
    public var socketFolder: String?
    public var sslMode: String

    /// Parses `text`; `nil` unless it is a `postgres://` or `postgresql://` URL. `environment` supplies
    /// `PGPASSWORD` (and `PGUSER`, `USER`) where the URL has none.
    public init?(_ text: String, environment: [String: String]) {
        guard text.hasPrefix("postgres://") || text.hasPrefix("postgresql://"),
              let components = URLComponents(string: text) else { return nil }
        var query: [String: String] = [:]
        for item in components.queryItems ?? [] { query[item.name] = item.value ?? "" }
        let host = components.percentEncodedHost.flatMap { $0.removingPercentEncoding } ?? ""
        self.port = components.port ?? Int(query["port"] ?? "") ?? 5432
        self.user = components.user ?? query["user"] ?? environment["PGUSER"] ?? environment["USER"] ?? "postgres"
        self.password = components.password ?? query["password"] ?? environment["PGPASSWORD"]
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        self.database = path.isEmpty ? (query["dbname"] ?? user) : path
        let socket = query["host"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? (host.hasPrefix("/") ? host : nil)
        self.socketFolder = socket
        self.host = socket == nil ? (host.isEmpty ? (query["host"] ?? "localhost") : host) : "localhost"
        self.sslMode = query["sslmode"] ?? "prefer"
    }

    /// The URL without its password, for messages.
    public var description: String {
        let place = socketFolder.map { "localhost:\(port)?host=\($0)" } ?? "\(host):\(port)"
        return "postgres://\(user)@\(place.contains("?") ? place.replacingOccurrences(of: "?", with: "/\(database)?") : "\(place)/\(database)")"
    }

    /// The connection settings for postgres-nio.
    var configuration: PostgresConnection.Configuration {
        if let socketFolder {
            return PostgresConnection.Configuration(unixSocketPath: "\(socketFolder)/.s.PGSQL.\(port)", username: user,
                                                    password: password, database: database)
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        if sslMode != "verify-full" { tls.certificateVerification = .none }
        let context = sslMode == "disable" ? nil : try? NIOSSLContext(configuration: tls)
        let mode: PostgresConnection.Configuration.TLS
        switch (sslMode, context) {
        case ("disable", _), (_, nil): mode = .disable
        case ("require", let context?), ("verify-ca", let context?), ("verify-full", let context?): mode = .require(context)
        case (_, let context?): mode = .prefer(context)
        }
        return PostgresConnection.Configuration(host: host, port: port, username: user, password: password,
                                                database: database, tls: mode)
    }
}

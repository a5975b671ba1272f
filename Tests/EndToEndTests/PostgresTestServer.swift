import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A throwaway PostgreSQL server on loopback for the tests of the PostgreSQL ledger: `initdb` into a temporary
/// folder (as the unprivileged `postgres` user when the tests run as root, since the server refuses root), then
/// `pg_ctl start` on a free port with `fsync` off; stopped and removed on ``stop()`` or deinit. About a second.
///
/// The server binaries come from Debian's `postgresql-15` (`.ci/run` installs it); without them
/// ``isAvailable`` is false and the PostgreSQL tests are skipped (and `make test` says so).
final class PostgresTestServer: @unchecked Sendable {
    static let binaries: String? = {
        for version in ["17", "16", "15", "14", "13"] {
            let folder = "/usr/lib/postgresql/\(version)/bin"
            if FileManager.default.isExecutableFile(atPath: folder + "/initdb") { return folder }
        }
        return nil
    }()

    static var isAvailable: Bool { binaries != nil }

    /// One server for the tests that only need a database of their own (``database(_:)``).
    /// Stopped when the test process exits (a static is never deinitialised, and a server left running would
    /// outlive every test run).
    static let shared: PostgresTestServer? = {
        let server = try? PostgresTestServer()
        if server != nil { atexit { PostgresTestServer.shared?.stop() } }
        return server
    }()

    let folder: String
    let port: Int
    private var running = true

    init() throws {
        guard let binaries = Self.binaries else { throw Failure("no PostgreSQL server binaries") }
        folder = NSTemporaryDirectory() + "subledger-pg-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        port = try Self.freePort()
        if getuid() == 0 { try Self.run(["/bin/chown", "-R", "postgres", folder]) }
        try Self.asServerUser([binaries + "/initdb", "-D", folder + "/data", "-A", "trust", "-U", "subledger",
                               "-E", "UTF8", "--no-sync", "--locale=C"])
        try Self.asServerUser([binaries + "/pg_ctl", "-D", folder + "/data", "-l", folder + "/server.log", "-w", "-o",
                               "-p \(port) -k \(folder) -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off",
                               "start"])
    }

    /// The URL of a new, empty database on this server; `settings` (name, value) apply to every session opened
    /// on it (`ALTER DATABASE ... SET`), e.g. planner switches that make a small table planned as a large one.
    func database(_ name: String, settings: [(String, String)] = []) throws -> String {
        guard let binaries = Self.binaries else { throw Failure("no PostgreSQL server binaries") }
        let database = "t_" + name.lowercased().filter { $0.isLetter || $0.isNumber } + "_" + UUID().uuidString.prefix(6).lowercased()
        try Self.run([binaries + "/createdb", "-h", "127.0.0.1", "-p", String(port), "-U", "subledger", database])
        for (setting, value) in settings {
            try Self.run([binaries + "/psql", "-h", "127.0.0.1", "-p", String(port), "-U", "subledger", "-d", database,
                          "-v", "ON_ERROR_STOP=1", "-c", "ALTER DATABASE \(database) SET \(setting) = \(value)"])
        }
        return "postgres://subledger@127.0.0.1:\(port)/\(database)?sslmode=disable"
    }

    /// Stops the server at once (as a crash or an operator would), keeping its data for ``start()``.
    func kill() throws {
        guard let binaries = Self.binaries else { return }
        try Self.asServerUser([binaries + "/pg_ctl", "-D", folder + "/data", "-m", "immediate", "stop"])
    }

    /// Starts the server again after ``kill()``.
    func start() throws {
        guard let binaries = Self.binaries else { return }
        try Self.asServerUser([binaries + "/pg_ctl", "-D", folder + "/data", "-l", folder + "/server.log", "-w", "-o",
                               "-p \(port) -k \(folder) -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off",
                               "start"])
    }

    func stop() {
        guard running, let binaries = Self.binaries else { return }
        running = false
        _ = try? Self.asServerUser([binaries + "/pg_ctl", "-D", folder + "/data", "-m", "immediate", "stop"])
        try? FileManager.default.removeItem(atPath: folder)
    }

    deinit { stop() }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// Runs `arguments` as the server's user (`postgres` when this process is root), failing on a non-zero exit.
    private static func asServerUser(_ arguments: [String]) throws {
        try run(getuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--"] + arguments : arguments)
    }

    /// Runs `arguments` through `posix_spawn` and `waitpid`, output to a file. Not Foundation's `Process`:
    /// `pg_ctl start` leaves the server running with what it inherited, and `Process` then waits for it too.
    private static func run(_ arguments: [String]) throws {
        let outputPath = NSTemporaryDirectory() + "subledger-pg-output-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, arguments[0], &actions, nil, &argv, environ)
        guard spawned == 0 else { throw Failure("cannot start \(arguments[0]): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let text = String(decoding: FileManager.default.contents(atPath: outputPath) ?? Data(), as: UTF8.self)
        // WIFEXITED and WEXITSTATUS, which Swift does not import.
        let exited = status & 0x7f == 0
        let code = (status >> 8) & 0xff
        guard exited && code == 0 else {
            throw Failure("\(arguments.joined(separator: " ")) failed (status \(status)): \(text)")
        }
    }

    /// A TCP port nothing listens on now (bound to port 0 and released).
    private static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure("cannot open a socket") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else { throw Failure("cannot bind a socket") }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else { throw Failure("cannot name a socket") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

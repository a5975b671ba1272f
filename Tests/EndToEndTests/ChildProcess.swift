import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn` and reaped with `waitpid`, for the tests that run the real
/// binary. Not Foundation's `Process`: on Linux its `waitUntilExit()` now and then never returned after the
/// child had exited (seen in a fresh-clone `make test`, the ingest long gone and the test waiting for good),
/// which would hang CI; `waitpid` on the child's own pid cannot miss it.
final class ChildProcess: @unchecked Sendable {
    let processIdentifier: pid_t
    private let lock = NSLock()
    private var status: Int32?

    /// Starts `executable` with `arguments` in `directory`, with `environment` as its whole environment, stdin
    /// from /dev/null and stdout / stderr into the files at `stdout` / `stderr` (created or truncated; one file
    /// when both name the same).
    init(_ executable: String, _ arguments: [String], directory: String, environment: [String: String],
         stdout: String, stderr: String) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if stderr == stdout {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        }
        // posix_spawn has no portable chdir: `env -C` (coreutils) changes the folder, then runs the program.
        let argv = ["/usr/bin/env", "-C", directory, executable] + arguments
        var cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        var cEnvironment: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in cArguments { free(pointer) }
            for pointer in cEnvironment { free(pointer) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, &cArguments, &cEnvironment)
        guard spawned == 0 else {
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "cannot start \(executable): \(String(cString: strerror(spawned)))"])
        }
        processIdentifier = pid
    }

    /// Whether the child has not exited yet (reaping it when it has).
    var isRunning: Bool {
        lock.lock()
        defer { lock.unlock() }
        if status != nil { return false }
        var raw: Int32 = 0
        let reaped = waitpid(processIdentifier, &raw, WNOHANG)
        if reaped == processIdentifier { status = raw }
        return status == nil
    }

    /// Waits for the child to exit; its exit code, or 128 + the signal that killed it (as a shell reports it).
    func waitForExit() -> Int32 {
        lock.lock()
        defer { lock.unlock() }
        if status == nil {
            var raw: Int32 = 0
            while waitpid(processIdentifier, &raw, 0) < 0 && errno == EINTR {}
            status = raw
        }
        let raw = status ?? 0
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import.
        return raw & 0x7f == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
    }
}

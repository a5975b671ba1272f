import Foundation
import Testing

/// Runs the real `subledger` executable that `swift build` put beside the test bundle.
enum Subprocess {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// `.build/<configuration>/subledger`, found from the test bundle's own location.
    static var executable: String {
        get throws {
            let bundle = Bundle.main.bundleURL
            var candidates = [bundle.appendingPathComponent("subledger").path,
                              bundle.deletingLastPathComponent().appendingPathComponent("subledger").path]
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            candidates.append(root.appendingPathComponent(".build/debug/subledger").path)
            return try #require(candidates.first { FileManager.default.isExecutableFile(atPath: $0) },
                                "subledger executable not found; run `swift build` first (looked at \(candidates))")
        }
    }

    /// Runs `subledger arguments...` to completion, capturing both streams (read concurrently, so a full
    /// pipe never blocks the child).
    static func run(_ arguments: [String]) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try executable)
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let group = DispatchGroup()
        nonisolated(unsafe) var errData = Data()
        group.enter()
        DispatchQueue.global().async {
            errData = err.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                      stderr: String(decoding: errData, as: UTF8.self))
    }
}

/// Temporary directories for one test.
enum Workspace {
    static func temporaryDirectory(_ name: String) throws -> String {
        let path = NSTemporaryDirectory() + "subledger-\(name)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

import Foundation
import FuzzTargets
import Simulator
import Testing

/// Every input that ever crashed or hung a fuzzing harness (or, before the harnesses, the pipeline), replayed
/// through the same entry point the harness uses (`FuzzRunner`). An input lives in `Fuzz/Regressions/<target>/`;
/// beside it, `<name>.expected` pins the one-line outcome it must give now. See docs/FUZZING.md.
@Suite struct FuzzRegressionTests {
    /// `<package root>/Fuzz/Regressions`, found from this file's path.
    static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.appendingPathComponent("Fuzz/Regressions").path
    }()

    /// The saved inputs of `target`, with their pinned outcomes.
    static func inputs(_ target: FuzzTarget) throws -> [(name: String, bytes: [UInt8], expected: String?)] {
        let directory = root + "/" + target.rawValue
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        return try names.filter { !$0.hasSuffix(".expected") && !$0.hasPrefix(".") }.sorted().map { name in
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name)))
            let expected = try? String(contentsOfFile: directory + "/" + name + ".expected", encoding: .utf8)
            return (name, bytes, expected?.trimmingCharacters(in: .newlines))
        }
    }

    @Test(arguments: FuzzTarget.allCases)
    func savedInputsRunCleanly(target: FuzzTarget) throws {
        let runner = try FuzzRunner(target)
        for input in try Self.inputs(target) {
            // A hang fails the test (after 30 s) instead of the test run; the thread is left behind.
            let box = OutcomeBox()
            let done = DispatchSemaphore(value: 0)
            let bytes = input.bytes
            let thread = Thread {
                box.outcome = Result { () throws(FuzzFailure) -> String in try runner.run(bytes) }
                done.signal()
            }
            thread.stackSize = 8 << 20
            thread.start()
            guard done.wait(timeout: .now() + 30) == .success, let outcome = box.outcome else {
                Issue.record("\(target.rawValue)/\(input.name) did not finish within 30 s")
                continue
            }
            switch outcome {
            case .failure(let failure):
                Issue.record("\(target.rawValue)/\(input.name): \(failure)")
            case .success(let summary):
                guard let expected = input.expected else {
                    Issue.record("\(target.rawValue)/\(input.name) has no .expected outcome; it gave: \(summary)")
                    continue
                }
                #expect(summary == expected, "\(target.rawValue)/\(input.name)")
            }
        }
    }

    /// Every target has saved inputs: the seeds committed by hand count as a floor, and the crashes found.
    @Test func everyTargetHasSavedInputs() throws {
        for target in FuzzTarget.allCases {
            #expect(try !Self.inputs(target).isEmpty, "Fuzz/Regressions/\(target.rawValue) is empty")
        }
    }

    /// The harnesses trust the chain `subledger simulate --seed 1` signs with, so that simulated seeds verify.
    @Test func theHarnessesTrustTheSimulatorsRoot() throws {
        let directory = NSTemporaryDirectory() + "fuzz-root-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let simulation = Simulation(subscribers: 2, months: 1, seed: FuzzRunner.simulationSeed)
        try simulation.write(to: directory)
        let written = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/apple-root.der")))
        #expect(try simulation.appleRootCertificate() == written)
    }
}

/// Where the replay thread leaves its outcome; read only after it signalled.
final class OutcomeBox: @unchecked Sendable {
    var outcome: Result<String, FuzzFailure>?
}

import CLibFuzzer
import Foundation
import FuzzTargets

/// The runner the libFuzzer callback uses: a C function pointer cannot capture, so it lives here, set once
/// before the fuzzing loop starts and only read after.
nonisolated(unsafe) private var runner: FuzzRunner?

/// The body of every harness's `<Module>_main`. `-write-seeds SIMULATION DIR` writes the target's seed corpus
/// from the simulation in SIMULATION (``FuzzSeeds/write(_:simulation:into:)``). Anything else goes to libFuzzer (`-runs`, `-max_total_time`,
/// corpus directories, ...). A ``FuzzFailure`` aborts, which libFuzzer records as a crash with its input.
public func runHarness(_ target: FuzzTarget, argc: Int32, argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    let arguments = (0..<Int(argc)).map { argv[$0].map { String(cString: $0) } ?? "" }
    if arguments.count == 4, arguments[1] == "-write-seeds" {
        do {
            let count = try FuzzSeeds.write(target, simulation: arguments[2], into: arguments[3])
            print("\(target.rawValue): \(count) seeds written to \(arguments[3])")
            return 0
        } catch {
            say("\(target.rawValue): cannot write seeds: \(error)")
            return 1
        }
    }
    do {
        runner = try FuzzRunner(target)
    } catch {
        say("\(target.rawValue): \(error)")
        return 1
    }
    var count = argc
    var values: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&count, &values) { data, size in
        let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
        do {
            _ = try runner?.run(bytes)
        } catch {
            say("FuzzFailure: \(error)")
            abort()
        }
        return 0
    }
}

private func say(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

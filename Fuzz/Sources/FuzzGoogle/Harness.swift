import FuzzDriver
import FuzzTargets

/// The `FuzzGoogle` harness: ``FuzzTarget/google`` under libFuzzer (see docs/FUZZING.md).
@_cdecl("FuzzGoogle_main")
public func harnessMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runHarness(.google, argc: argc, argv: argv)
}

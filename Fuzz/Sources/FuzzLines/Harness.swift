import FuzzDriver
import FuzzTargets

/// The `FuzzLines` harness: ``FuzzTarget/lines`` under libFuzzer (see docs/FUZZING.md).
@_cdecl("FuzzLines_main")
public func harnessMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runHarness(.lines, argc: argc, argv: argv)
}

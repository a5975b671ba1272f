import FuzzDriver
import FuzzTargets

/// The `FuzzApple` harness: ``FuzzTarget/apple`` under libFuzzer (see docs/FUZZING.md).
@_cdecl("FuzzApple_main")
public func harnessMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runHarness(.apple, argc: argc, argv: argv)
}

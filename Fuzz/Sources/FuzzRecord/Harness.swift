import FuzzDriver
import FuzzTargets

/// The `FuzzRecord` harness: ``FuzzTarget/record`` under libFuzzer (see docs/FUZZING.md).
@_cdecl("FuzzRecord_main")
public func harnessMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runHarness(.record, argc: argc, argv: argv)
}

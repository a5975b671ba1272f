import FuzzDriver
import FuzzTargets

/// The `FuzzJSON` harness: ``FuzzTarget/json`` under libFuzzer (see docs/FUZZING.md).
@_cdecl("FuzzJSON_main")
public func harnessMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runHarness(.json, argc: argc, argv: argv)
}

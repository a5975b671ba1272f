import FuzzDriver
import FuzzTargets

/// The `FuzzZip` harness: ``FuzzTarget/zip`` under libFuzzer (see docs/FUZZING.md).
@_cdecl("FuzzZip_main")
public func harnessMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runHarness(.zip, argc: argc, argv: argv)
}

import FuzzDriver
import FuzzTargets

/// The `FuzzJWSVerify` harness: ``FuzzTarget/jwsVerify`` under libFuzzer (see docs/FUZZING.md).
@_cdecl("FuzzJWSVerify_main")
public func harnessMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runHarness(.jwsVerify, argc: argc, argv: argv)
}

import FuzzDriver
import FuzzTargets

/// The `FuzzJWSDecode` harness: ``FuzzTarget/jwsDecode`` under libFuzzer (see docs/FUZZING.md).
@_cdecl("FuzzJWSDecode_main")
public func harnessMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runHarness(.jwsDecode, argc: argc, argv: argv)
}

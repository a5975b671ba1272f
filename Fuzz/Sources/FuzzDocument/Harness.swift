import FuzzDriver
import FuzzTargets

/// The `FuzzDocument` harness: ``FuzzTarget/document`` under libFuzzer (see docs/FUZZING.md).
@_cdecl("FuzzDocument_main")
public func harnessMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runHarness(.document, argc: argc, argv: argv)
}

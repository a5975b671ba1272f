import FuzzDriver
import FuzzTargets

/// The `FuzzTar` harness: ``FuzzTarget/tar`` under libFuzzer (see docs/FUZZING.md).
@_cdecl("FuzzTar_main")
public func harnessMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runHarness(.tar, argc: argc, argv: argv)
}

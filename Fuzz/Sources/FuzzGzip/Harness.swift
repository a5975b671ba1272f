import FuzzDriver
import FuzzTargets

/// The `FuzzGzip` harness: ``FuzzTarget/gzip`` under libFuzzer (see docs/FUZZING.md).
@_cdecl("FuzzGzip_main")
public func harnessMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runHarness(.gzip, argc: argc, argv: argv)
}

// swift-tools-version:6.0
import PackageDescription

// The libFuzzer harnesses: a package of their own, so that `make build` and `make test` never build them (they
// need -sanitize=fuzzer, which plain builds do not link). `make fuzz` builds them with
//   swift build -c release --package-path Fuzz --scratch-path .build-fuzz \
//     -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
// Each harness is one FuzzTarget of the main package's FuzzTargets module (the same entry points the
// FuzzRegressionTests replay), glued to libFuzzer by FuzzDriver. See docs/FUZZING.md.

/// The main package, one folder up; a path dependency is named by its folder, whatever the clone is called.
let root = Context.packageDirectory.split(separator: "/").dropLast().last.map(String.init) ?? "subledger"

let harnesses = [
    "FuzzJSON", "FuzzRecord", "FuzzLines", "FuzzDocument", "FuzzGzip", "FuzzTar", "FuzzZip",
    "FuzzJWSDecode", "FuzzJWSVerify", "FuzzApple", "FuzzGoogle",
]

let package = Package(
    name: "subledger-fuzz",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(path: ".."),
    ],
    targets: [
        .target(name: "CLibFuzzer"),
        .target(name: "FuzzDriver", dependencies: [
            "CLibFuzzer", .product(name: "FuzzTargets", package: root),
        ]),
    ] + harnesses.map { .executableTarget(name: $0, dependencies: ["FuzzDriver", .product(name: "FuzzTargets", package: root)]) },
    swiftLanguageModes: [.v6]
)

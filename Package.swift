// swift-tools-version:6.0
import PackageDescription

// The pipeline, one module per stage; data flows one way:
//   Ingest (containers → records) → AppStore / PlayStore (payloads → facts → histories)
//   → Ledger (SQLite or PostgreSQL store of records and facts) → SubscriptionMetrics (timelines → tables)
//   → Reporting (CSV, JSON, HTML)
// `Facts` is the vocabulary the stages share; `Pipeline` composes the stages; `subledger` is the thin CLI.
// `Simulator` stands on the side and shares no code with the pipeline, so its truth is independent.
let package = Package(
    name: "subledger",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "subledger", targets: ["subledger"]),
        // For the libFuzzer harnesses, a package of their own in Fuzz/ (docs/FUZZING.md).
        .library(name: "FuzzTargets", targets: ["FuzzTargets"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", exact: "3.12.3"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/weichsel/ZIPFoundation", from: "0.9.20"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    ],
    targets: [
        .systemLibrary(name: "SystemZlib", path: "Sources/SystemZlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "SystemSQLite", path: "Sources/SystemSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "SystemZstd", path: "Sources/SystemZstd", providers: [.apt(["libzstd-dev"])]),

        .target(name: "Facts"),
        .target(name: "Ingest", dependencies: [
            "Facts",
            "SystemZlib",
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        .target(name: "AppStore", dependencies: [
            "Facts", "Ingest",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "X509", package: "swift-certificates"),
            .product(name: "SwiftASN1", package: "swift-asn1"),
        ]),
        .target(name: "PlayStore", dependencies: ["Facts", "Ingest"]),
        .target(name: "Ledger", dependencies: [
            "Facts", "Ingest", "SystemSQLite", "SystemZstd",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "PostgresNIO", package: "postgres-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .target(name: "SubscriptionMetrics", dependencies: ["Facts"]),
        .target(name: "Reporting", dependencies: ["SubscriptionMetrics", "Facts"]),
        .target(name: "Pipeline", dependencies: [
            "Facts", "Ingest", "AppStore", "PlayStore", "Ledger", "SubscriptionMetrics", "Reporting",
            .product(name: "Logging", package: "swift-log"),
        ]),
        .target(name: "Simulator", dependencies: [
            "SystemZlib",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "X509", package: "swift-certificates"),
            .product(name: "SwiftASN1", package: "swift-asn1"),
            .product(name: "ZIPFoundation", package: "ZIPFoundation"),
        ]),
        // The parsers that read untrusted bytes, one entry point each: run by the fuzzing harnesses (Fuzz/) and
        // by FuzzRegressionTests on every input that ever crashed or hung.
        .target(name: "FuzzTargets", dependencies: [
            "Facts", "Ingest", "AppStore", "PlayStore", "Ledger", "SubscriptionMetrics", "Pipeline", "Simulator", "SystemZlib",
        ]),
        .executableTarget(name: "subledger", dependencies: [
            "Pipeline", "Simulator", "Facts", "Ingest", "AppStore", "PlayStore", "Ledger", "SubscriptionMetrics", "Reporting",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),

        .testTarget(name: "IngestTests", dependencies: [
            "Ingest", "Facts", "SystemZlib", "AppStore", "PlayStore", .product(name: "ZIPFoundation", package: "ZIPFoundation"),
        ]),
        .testTarget(name: "AppStoreTests", dependencies: [
            "AppStore", "Facts", "Ingest",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "X509", package: "swift-certificates"),
            .product(name: "SwiftASN1", package: "swift-asn1"),
        ]),
        .testTarget(name: "PlayStoreTests", dependencies: ["PlayStore", "Facts", "Ingest"]),
        .testTarget(name: "LedgerTests", dependencies: ["Ledger", "Facts", "Ingest", "AppStore", "PlayStore"]),
        .testTarget(name: "MetricsTests", dependencies: ["SubscriptionMetrics", "Reporting", "Facts"]),
        .testTarget(name: "ReportingTests", dependencies: ["Reporting", "SubscriptionMetrics", "Facts"]),
        .testTarget(name: "SimulatorTests", dependencies: ["Simulator"]),
        .testTarget(name: "FuzzRegressionTests", dependencies: ["FuzzTargets"]),
        .testTarget(name: "EndToEndTests", dependencies: [
            "Pipeline", "Simulator", "Facts", "Ingest", "Ledger", "AppStore", "PlayStore",
            .product(name: "Logging", package: "swift-log"),
        ], exclude: ["Fixtures"]),
    ],
    swiftLanguageModes: [.v6]
)

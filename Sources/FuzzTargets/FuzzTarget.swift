import Facts
import Foundation
import Ingest

/// The parsers that read untrusted bytes, one entry point each, for coverage-guided fuzzing (libFuzzer
/// harnesses in `Fuzz/`) and for the regression tests that replay every input that ever crashed or hung
/// (`Tests/FuzzRegressionTests`): both call ``FuzzRunner/run(_:)``, so a saved input takes exactly the path
/// it took under the fuzzer.
///
/// Each target checks properties that must hold for any input (a round trip that changes nothing, offsets
/// inside the input, the monthly identity of every report row) and throws ``FuzzFailure`` when one does not;
/// the harness turns that into a crash libFuzzer records.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// `JSONParser`, with a compact write and re-parse that must give the same value.
    case json
    /// `RecordParser`: envelope, body forms, payload sniffing, deduplication key.
    case record
    /// The line splitter (`.ndjson`) through `ArchiveReader`.
    case lines
    /// The JSON document and array splitter (`.json`) through `ArchiveReader`.
    case document
    /// gzip (multi-member, and whatever it holds) through `ArchiveReader`.
    case gzip
    /// tar (ustar, pax, GNU) and its members through `ArchiveReader`.
    case tar
    /// zip (central directory, local headers, stored and deflated members) through `ArchiveReader`.
    case zip
    /// `CompactJWS` splitting and decoding, header included, unverified.
    case jwsDecode = "jws-decode"
    /// `JWSVerifier`: ES256, the `x5c` chain to the simulator's root, Apple's marker OIDs, validity dates.
    case jwsVerify = "jws-verify"
    /// Apple payloads, one per line, down to metrics and the rendered CSV and JSON.
    case apple
    /// Google payloads, one per line, down to metrics and the rendered CSV and JSON.
    case google
}

/// A property that must hold for every input did not.
public struct FuzzFailure: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}

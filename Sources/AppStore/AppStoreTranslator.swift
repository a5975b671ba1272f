import Facts
import Ingest
import X509

/// Turns one Apple record into facts.
public struct AppStoreTranslator: Sendable {
    /// Apple Root CA - G3 as DER, the root production App Store signatures chain to.
    public static let appleRootCAG3: [[UInt8]] = [Base64URL.decode(appleRootCAG3Base64) ?? []]

    let bundleIds: Set<String>
    let verifier: JWSVerifier

    public init(trustedRoots: [[UInt8]], bundleIds: Set<String>) throws(AppStoreError) {
        self.verifier = try JWSVerifier(trustedRoots: trustedRoots)
        self.bundleIds = bundleIds
    }

    public func translate(_ record: ParsedRecord) -> Translation {
        .used([])
    }
}

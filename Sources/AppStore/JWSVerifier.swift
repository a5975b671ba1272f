import Facts
import Ingest
import X509

/// Verifies App Store compact JWS.
public struct JWSVerifier: Sendable {
    let roots: [Certificate]

    public init(trustedRoots: [[UInt8]]) throws(AppStoreError) {
        var roots: [Certificate] = []
        for (index, der) in trustedRoots.enumerated() {
            do { roots.append(try Certificate(derEncoded: der)) }
            catch { throw .unparsableRoot(index: index, reason: "\(error)") }
        }
        self.roots = roots
    }
}

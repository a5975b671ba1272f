import SwiftASN1
import X509

/// Apple's App Store signing policy on top of RFC 5280: exactly leaf, intermediate, root; the leaf carries
/// the "Apple receipt / App Store signing" marker extension 1.2.840.113635.100.6.11.1 and the intermediate the
/// "Apple Worldwide Developer Relations" intermediate marker 1.2.840.113635.100.6.2.1.
///
/// The markers are not critical extensions, so this policy claims none (``verifyingCriticalExtensions`` is
/// empty); it only requires their presence.
struct AppleMarkerOIDPolicy: VerifierPolicy {
    static let leafMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
    static let intermediateMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]

    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = []

    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) -> PolicyEvaluationResult {
        guard chain.count == 3 else {
            return .failsToMeetPolicy(reason: "chain has \(chain.count) certificates, Apple's has 3")
        }
        guard chain[0].extensions[oid: Self.leafMarker] != nil else {
            return .failsToMeetPolicy(reason: "leaf lacks Apple marker OID 1.2.840.113635.100.6.11.1")
        }
        guard chain[1].extensions[oid: Self.intermediateMarker] != nil else {
            return .failsToMeetPolicy(reason: "intermediate lacks Apple marker OID 1.2.840.113635.100.6.2.1")
        }
        return .meetsPolicy
    }
}

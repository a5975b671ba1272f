import Crypto
import Facts
import Foundation
import Ingest
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// Verifies an App Store compact JWS (notification `signedPayload`, `signedTransactionInfo`,
/// `signedRenewalInfo`) the way Apple's App Store Server Library does, offline:
///
/// 1. the protected header's `alg` is `ES256` and its `x5c` holds exactly three base64 DER certificates
///    `[leaf, intermediate, root]`;
/// 2. leaf → intermediate → a **configured** trusted root forms a chain under RFC 5280 at the validation time,
///    the payload's own `signedDate` (ms UTC): archives outlive certificates, so "now" would reject valid history.
///    Like Apple's library, the root sent in `x5c` is never trusted by itself: the chain is built to the
///    configured roots, and the sent root must be one of them or be signed by one (Apple's test vectors send a
///    re-issued root with the trusted root's name and key);
/// 3. the leaf carries Apple's marker extension 1.2.840.113635.100.6.11.1 and the intermediate
///    1.2.840.113635.100.6.2.1 (``AppleMarkerOIDPolicy``);
/// 4. the ES256 signature (64 bytes `r || s`) over `header.payload` verifies with the leaf's P-256 key.
///
/// Checks 1–3 are cached by the header's base64url text (Apple signs millions of payloads with a handful of
/// leaves, and the header is the algorithm and the chain, nothing else): a header seen before is not decoded
/// again. A cache hit still checks the validity window against this payload's `signedDate` and still verifies
/// this payload's signature.
///
/// Copies share one cache; `verify` is safe to call from several threads.
public struct JWSVerifier: Sendable {
    let roots: [Certificate]
    let cache: VerifiedChainCache

    /// - Parameter trustedRoots: DER certificates to chain to (Apple Root CA G3 in production).
    /// - Throws: ``AppStoreError/unparsableRoot(index:reason:)`` when one of them is not a certificate.
    public init(trustedRoots: [[UInt8]]) throws(AppStoreError) {
        var roots: [Certificate] = []
        for (index, der) in trustedRoots.enumerated() {
            do { roots.append(try Certificate(derEncoded: der)) }
            catch { throw .unparsableRoot(index: index, reason: "\(error)") }
        }
        self.roots = roots
        self.cache = VerifiedChainCache()
    }

    /// Decodes and verifies `text`; returns the decoded JWS only when every check passed.
    /// - Parameter unsignedDateFallback: the validation time when the payload has no `signedDate` (ms UTC), such
    ///   as the record's `received_at`. With neither, the JWS is rejected: Apple's library would check at "now",
    ///   but then the same archive would verify today and fail once the leaf expires, and ingest must give the
    ///   same ledger whenever it runs. Apple sends `signedDate` in every payload it signs.
    /// - Throws: ``JWSVerificationError`` naming the check that failed.
    public func verify(_ text: String, unsignedDateFallback: Millis? = nil) throws(JWSVerificationError) -> CompactJWS {
        guard let jws = CompactJWS(text) else { throw .malformed("not a compact JWS with a JSON payload") }
        try verify(jws, unsignedDateFallback: unsignedDateFallback)
        return jws
    }

    /// Verifies an already decoded JWS; see ``verify(_:unsignedDateFallback:)-(String,_)``.
    /// - Throws: ``JWSVerificationError`` naming the check that failed.
    public func verify(_ jws: CompactJWS, unsignedDateFallback: Millis? = nil) throws(JWSVerificationError) {
        let key = jws.headerSegment
        let cached = cache[key]
        // A header seen before passed these checks; a new one is read first, so that a header without a chain
        // is reported as such whatever its payload holds.
        let certificates = cached == nil ? try Self.certificates(in: jws.decodeHeader()) : []
        guard let signedAt = jws.payload["signedDate"]?.int64 ?? unsignedDateFallback else {
            throw .chain("the payload has no signedDate and the record no received_at: no time to check the certificates at")
        }
        let validationTime = Date(timeIntervalSince1970: Double(signedAt) / 1000)
        let chain: VerifiedChain
        if let cached {
            guard cached.validFrom <= validationTime, validationTime <= cached.validUntil else {
                throw .chain("certificate chain not valid at \(validationTime)")
            }
            chain = cached
        } else {
            chain = try validateChain(certificates, at: validationTime)
            cache[key] = chain
        }

        guard jws.signature.count == 64,
              let signature = try? P256.Signing.ECDSASignature(rawRepresentation: jws.signature) else {
            throw .signature("ES256 signature is not 64 bytes r || s")
        }
        guard let leafKey = try? P256.Signing.PublicKey(rawRepresentation: chain.leafKey),
              leafKey.isValidSignature(signature, for: jws.signingInput) else {
            throw .signature("ES256 signature does not verify with the leaf certificate's key")
        }
    }

    /// The `x5c` certificates `[leaf, intermediate, root]` of a header that names ES256.
    private static func certificates(in header: JSONObject?) throws(JWSVerificationError) -> [Certificate] {
        guard let header else { throw .malformed("header is not base64url JSON") }
        guard let alg = header["alg"]?.string else { throw .malformed("header has no alg") }
        guard alg == "ES256" else { throw .unsupportedAlgorithm(alg) }
        guard let x5c = header["x5c"]?.array else { throw .missingX5C }
        guard x5c.count == 3 else { throw .chain("x5c holds \(x5c.count) certificates, expected 3") }
        var certificates: [Certificate] = []
        for (index, item) in x5c.enumerated() {
            guard let text = item.string, let der = Base64URL.decode(text), !der.isEmpty else {
                throw .chain("x5c[\(index)] is not base64")
            }
            do { certificates.append(try Certificate(derEncoded: der)) }
            catch { throw .chain("x5c[\(index)] is not a DER certificate: \(error)") }
        }
        return certificates
    }

    /// Checks that `certificates` chain to a configured root at `time`.
    private func validateChain(_ certificates: [Certificate], at time: Date) throws(JWSVerificationError) -> VerifiedChain {
        let leaf = certificates[0]
        let intermediate = certificates[1]
        let sentRoot = certificates[2]
        guard self.roots.contains(where: { $0 == sentRoot || Self.issued(sentRoot, by: $0) }) else {
            throw .chain("x5c root is neither a trusted root nor signed by one")
        }
        guard let leafKey = P256.Signing.PublicKey(leaf.publicKey) else {
            throw .chain("leaf key is not P-256")
        }
        let roots = CertificateStore(self.roots)
        let result = SynchronousAsync.run {
            var verifier = Verifier(rootCertificates: roots) {
                RFC5280Policy(fixedExpiryValidationTime: time)
                AppleMarkerOIDPolicy()
            }
            return await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate]))
        }
        switch result {
        case .validCertificate(let validated):
            let chain = Array(validated)
            let validFrom = chain.map(\.notValidBefore).max() ?? time
            let validUntil = chain.map(\.notValidAfter).min() ?? time
            return VerifiedChain(leafKey: Array(leafKey.rawRepresentation), validFrom: validFrom, validUntil: validUntil)
        case .couldNotValidate(let failures):
            let reasons = failures.map { "\($0.policyFailureReason)" }
            throw .chain(reasons.isEmpty ? "no chain to a trusted root" : reasons.joined(separator: "; "))
        }
    }
}

extension JWSVerifier {
    /// Whether `certificate` names `issuer` as its issuer and carries a valid signature of `issuer`'s key
    /// (a re-issued root with the trusted root's name and key passes, as in Apple's test vectors).
    static func issued(_ certificate: Certificate, by issuer: Certificate) -> Bool {
        certificate.issuer == issuer.subject && issuer.publicKey.isValidSignature(certificate.signature, for: certificate)
    }
}

/// Why a JWS was rejected; the description is what the quarantine shows.
public enum JWSVerificationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Not a compact JWS, or a header / payload member the checks need is missing.
    case malformed(String)
    /// `alg` other than ES256.
    case unsupportedAlgorithm(String)
    /// The header has no `x5c` member.
    case missingX5C
    /// The certificate chain failed: parsing, path to a trusted root, validity at `signedDate`, marker OIDs.
    case chain(String)
    /// The signature failed.
    case signature(String)

    public var description: String {
        switch self {
        case .malformed(let why): return "malformed JWS: \(why)"
        case .unsupportedAlgorithm(let alg): return "alg \(alg) is not ES256"
        case .missingX5C: return "header has no x5c certificate chain"
        case .chain(let why): return "certificate chain rejected: \(why)"
        case .signature(let why): return why
        }
    }
}

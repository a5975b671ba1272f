import Crypto
import Foundation
import SwiftASN1
import X509

/// A three-certificate chain shaped like Apple's App Store signing chain (root CA → intermediate carrying
/// OID 1.2.840.113635.100.6.2.1 → leaf carrying 1.2.840.113635.100.6.11.1), generated from the seed, and the
/// ES256 JWS signer that uses its leaf. Every key and every signature is deterministic for a seed.
struct AppleSigningChain {
    /// DER certificates: leaf, intermediate, root (the order of a JWS `x5c` header).
    let leaf: [UInt8]
    let intermediate: [UInt8]
    let root: [UInt8]
    private let leafKey: DeterministicES256
    /// The base64url JWS header, computed once (it is the same for every signature).
    private let encodedHeader: String

    /// Errors while building the certificates (swift-certificates / DER serialisation).
    struct BuildError: Error, CustomStringConvertible {
        var description: String
    }

    /// Builds the chain for `seed`; `label` keeps a second, untrusted chain (for forged notifications) apart.
    init(seed: UInt64, label: String) throws(BuildError) {
        let rootKey = DeterministicES256(seed: seed, label: "\(label)-root")
        let intermediateKey = DeterministicES256(seed: seed, label: "\(label)-intermediate")
        let leafKey = DeterministicES256(seed: seed, label: "\(label)-leaf")
        do {
            let rootName = try DistinguishedName {
                CommonName("\(label) Root CA - G3")
                OrganizationalUnitName("Certification Authority")
                OrganizationName("Subledger Simulation")
                CountryName("US")
            }
            let intermediateName = try DistinguishedName {
                CommonName("\(label) Worldwide Developer Relations Certification Authority")
                OrganizationalUnitName("G6")
                OrganizationName("Subledger Simulation")
                CountryName("US")
            }
            let leafName = try DistinguishedName {
                CommonName("Prod ECC Mac App Store and iTunes Store Receipt Signing")
                OrganizationalUnitName("\(label) Worldwide Developer Relations")
                OrganizationName("Subledger Simulation")
                CountryName("US")
            }
            let caExtensions = try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            }
            let intermediateExtensions = try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                Certificate.Extension(oid: [1, 2, 840, 113635, 100, 6, 2, 1], critical: false, value: [0x05, 0x00])
            }
            let leafExtensions = try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                Certificate.Extension(oid: [1, 2, 840, 113635, 100, 6, 11, 1], critical: false, value: [0x05, 0x00])
            }
            let notBefore = Date(timeIntervalSince1970: 1_672_531_200) // 2023-01-01
            let notAfter = Date(timeIntervalSince1970: 2_051_222_400) // 2035-01-01
            root = try AppleSigningChain.certificate(
                serial: 1, subject: rootName, issuer: rootName, key: rootKey.privateKey.publicKey,
                signer: rootKey, extensions: caExtensions, notBefore: notBefore, notAfter: notAfter)
            intermediate = try AppleSigningChain.certificate(
                serial: 2, subject: intermediateName, issuer: rootName, key: intermediateKey.privateKey.publicKey,
                signer: rootKey, extensions: intermediateExtensions, notBefore: notBefore, notAfter: notAfter)
            leaf = try AppleSigningChain.certificate(
                serial: 3, subject: leafName, issuer: intermediateName, key: leafKey.privateKey.publicKey,
                signer: intermediateKey, extensions: leafExtensions, notBefore: notBefore, notAfter: notAfter)
        } catch {
            throw BuildError(description: "could not build the \(label) signing chain: \(error)")
        }
        self.leafKey = leafKey
        let header = JSONValue.object([
            ("alg", .string("ES256")),
            ("x5c", .array([leaf, intermediate, root].map { .string(Base64.encode($0)) })),
        ])
        encodedHeader = AppleSigningChain.base64URL(Array(header.serialized.utf8))
    }

    /// A certificate whose TBS part swift-certificates builds and whose signature is deterministic.
    private static func certificate(serial: Int, subject: DistinguishedName, issuer: DistinguishedName,
                                    key: P256.Signing.PublicKey, signer: DeterministicES256,
                                    extensions: Certificate.Extensions, notBefore: Date, notAfter: Date) throws -> [UInt8] {
        // swift-certificates signs with fresh randomness; only its TBS bytes are kept.
        let template = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(serial), publicKey: Certificate.PublicKey(key),
            notValidBefore: notBefore, notValidAfter: notAfter, issuer: issuer, subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions,
            issuerPrivateKey: Certificate.PrivateKey(signer.privateKey))
        let tbs = Array(template.tbsCertificateBytes)
        let signature = signer.signDER(tbs)
        // AlgorithmIdentifier { ecdsa-with-SHA256 (1.2.840.10045.4.3.2) }
        let algorithm: [UInt8] = [0x30, 0x0A, 0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x04, 0x03, 0x02]
        let bitString = derElement(tag: 0x03, body: [0x00] + signature)
        return derElement(tag: 0x30, body: tbs + algorithm + bitString)
    }

    private static func derElement(tag: UInt8, body: [UInt8]) -> [UInt8] {
        var length: [UInt8]
        if body.count < 0x80 {
            length = [UInt8(body.count)]
        } else {
            var bytes: [UInt8] = []
            var n = body.count
            while n > 0 { bytes.insert(UInt8(n & 0xFF), at: 0); n >>= 8 }
            length = [0x80 | UInt8(bytes.count)] + bytes
        }
        return [tag] + length + body
    }

    /// A compact JWS (`header.payload.signature`, base64url) of `payload` with header
    /// `{"alg":"ES256","x5c":[leaf, intermediate, root]}` (standard base64 DER, as Apple writes it).
    func sign(_ payload: JSONValue) -> String {
        let input = encodedHeader + "." + AppleSigningChain.base64URL(Array(payload.serialized.utf8))
        return input + "." + AppleSigningChain.base64URL(leafKey.sign(Array(input.utf8)))
    }

    static func base64URL(_ bytes: [UInt8]) -> String { Base64.encodeURL(bytes) }
}

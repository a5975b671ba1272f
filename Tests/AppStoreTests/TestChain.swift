import AppStore
import Crypto
import Foundation
import Ingest
import SwiftASN1
import X509

/// A three-certificate chain shaped like Apple's (P-384 root and intermediate, P-256 leaf, the marker OIDs),
/// generated per test, and a signer of compact JWS with it.
struct TestChain {
    static let leafMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
    static let intermediateMarker: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]

    let rootDER: [UInt8]
    let intermediateDER: [UInt8]
    let leafDER: [UInt8]
    let leafKey: P256.Signing.PrivateKey

    /// - Parameters:
    ///   - leafValidity: the leaf's validity window (the CA certificates cover 2020–2040).
    ///   - markers: whether leaf and intermediate carry Apple's marker OIDs.
    init(leafValidity: ClosedRange<Date> = TestChain.date(2020)...TestChain.date(2040), markers: Bool = true) throws {
        let rootKey = P384.Signing.PrivateKey()
        let intermediateKey = P384.Signing.PrivateKey()
        leafKey = P256.Signing.PrivateKey()
        let rootName = try DistinguishedName {
            CountryName("US")
            OrganizationName("subledger test")
            CommonName("Test Root CA - G3")
        }
        let intermediateName = try DistinguishedName {
            CountryName("US")
            OrganizationName("subledger test")
            CommonName("Test WWDR CA")
        }
        let leafName = try DistinguishedName {
            CountryName("US")
            OrganizationName("subledger test")
            CommonName("Test App Store signing")
        }
        let caExtensions = try Certificate.Extensions([
            Certificate.Extension(BasicConstraints.isCertificateAuthority(maxPathLength: nil), critical: true),
            Certificate.Extension(KeyUsage(keyCertSign: true, cRLSign: true), critical: true),
        ])
        let root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey),
            notValidBefore: Self.date(2020), notValidAfter: Self.date(2040), issuer: rootName, subject: rootName,
            signatureAlgorithm: .ecdsaWithSHA384, extensions: caExtensions, issuerPrivateKey: .init(rootKey))
        var intermediateExtensions = [
            try Certificate.Extension(BasicConstraints.isCertificateAuthority(maxPathLength: 0), critical: true),
            try Certificate.Extension(KeyUsage(keyCertSign: true, cRLSign: true), critical: true),
        ]
        var leafExtensions = [
            try Certificate.Extension(BasicConstraints.notCertificateAuthority, critical: true),
            try Certificate.Extension(KeyUsage(digitalSignature: true), critical: true),
        ]
        if markers {
            intermediateExtensions.append(Certificate.Extension(oid: Self.intermediateMarker, critical: false, value: [0x05, 0x00]))
            leafExtensions.append(Certificate.Extension(oid: Self.leafMarker, critical: false, value: [0x05, 0x00]))
        }
        let intermediate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(intermediateKey.publicKey),
            notValidBefore: Self.date(2020), notValidAfter: Self.date(2040), issuer: rootName,
            subject: intermediateName, signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions(intermediateExtensions), issuerPrivateKey: .init(rootKey))
        let leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(leafKey.publicKey),
            notValidBefore: leafValidity.lowerBound, notValidAfter: leafValidity.upperBound, issuer: intermediateName,
            subject: leafName, signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions(leafExtensions), issuerPrivateKey: .init(intermediateKey))
        rootDER = try Self.der(root)
        intermediateDER = try Self.der(intermediate)
        leafDER = try Self.der(leaf)
    }

    /// A compact JWS of `payload` (JSON text) signed by the leaf, with `x5c` = [leaf, intermediate, root].
    func sign(_ payload: String, header: String? = nil) throws -> String {
        let x5c = [leafDER, intermediateDER, rootDER].map { "\"\(Data($0).base64EncodedString())\"" }
        let headerText = header ?? "{\"alg\":\"ES256\",\"x5c\":[\(x5c.joined(separator: ","))]}"
        let input = Base64URL.encode(Array(headerText.utf8)) + "." + Base64URL.encode(Array(payload.utf8))
        let signature = try leafKey.signature(for: Array(input.utf8))
        return input + "." + Base64URL.encode(Array(signature.rawRepresentation))
    }

    static func date(_ year: Int) -> Date {
        Date(timeIntervalSince1970: Double(AppleDateForTests.millis(year: year, month: 1, day: 1)) / 1000)
    }

    private static func der(_ certificate: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }
}

import Crypto
import Foundation
import Testing
@_spi(FixedExpiryValidationTime) import X509
@testable import Simulator

/// The deterministic ES256 signer's scalar arithmetic and its signatures.
struct DeterministicSigningTests {
    @Test func inverseTimesValueIsOne() {
        let a = Scalar(bytes: Array(repeating: 0xAB, count: 32)).reduced()
        #expect(a.inverse().multiplied(by: a) == Scalar.one)
        let small = Scalar(7, 0, 0, 0)
        #expect(small.inverse().multiplied(by: small) == Scalar.one)
    }

    @Test func signaturesVerifyAndRepeat() {
        let signer = DeterministicES256(seed: 42, label: "test")
        let message = Array("header.payload".utf8)
        let first = signer.sign(message)
        #expect(first == signer.sign(message))
        #expect(first.count == 64)
        let signature = try? P256.Signing.ECDSASignature(rawRepresentation: first)
        #expect(signature.map { signer.privateKey.publicKey.isValidSignature($0, for: message) } == true)
        #expect(signer.sign(Array("other".utf8)) != first)
    }
}

/// The generated App Store chain passes swift-certificates' RFC 5280 verification to its own root.
struct SigningChainTests {
    @Test func chainVerifiesToItsRootAndNotToAnother() async throws {
        let chain = try AppleSigningChain(seed: 9, label: "Simulated Apple")
        let forged = try AppleSigningChain(seed: 9, label: "Forged")
        let leaf = try Certificate(derEncoded: chain.leaf)
        let intermediate = try Certificate(derEncoded: chain.intermediate)
        let at = Date(timeIntervalSince1970: 1_720_000_000)
        func verify(against root: [UInt8]) async throws -> Bool {
            var verifier = Verifier(rootCertificates: CertificateStore([try Certificate(derEncoded: root)])) {
                RFC5280Policy(fixedExpiryValidationTime: at)
            }
            let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate]))
            if case .validCertificate = result { return true }
            return false
        }
        #expect(try await verify(against: chain.root))
        #expect(try await verify(against: forged.root) == false)
        #expect(leaf.extensions[oid: [1, 2, 840, 113635, 100, 6, 11, 1]] != nil)
        #expect(intermediate.extensions[oid: [1, 2, 840, 113635, 100, 6, 2, 1]] != nil)
    }
}

import Crypto

/// ES256 (ECDSA P-256 with SHA-256) with a deterministic nonce, so one seed always gives byte-identical JWS
/// and certificates. BoringSSL's signer mixes in fresh randomness; here the nonce is
/// `k = HMAC-SHA256(d, SHA-256(message) ‖ counter)` (in the spirit of RFC 6979), `k·G` comes from
/// `P256.KeyAgreement` and the scalar arithmetic mod n is done below. Signatures verify with any ES256
/// verifier (the tests check them with swift-crypto). Test data only: never use this for real keys.
struct DeterministicES256 {
    let privateKey: P256.Signing.PrivateKey
    private let d: Scalar

    /// A key from 32 seeded bytes (retried with a counter until they are a valid P-256 scalar).
    init(seed: UInt64, label: String) {
        var counter: UInt8 = 0
        while true {
            var material = Array(label.utf8)
            withUnsafeBytes(of: seed.bigEndian) { material.append(contentsOf: $0) }
            material.append(counter)
            let bytes = Array(SHA256.hash(data: material))
            if let key = try? P256.Signing.PrivateKey(rawRepresentation: bytes) {
                privateKey = key
                d = Scalar(bytes: bytes)
                return
            }
            counter &+= 1
        }
    }

    /// The raw `r ‖ s` signature (64 bytes) of SHA-256(`message`), as JWS ES256 wants it.
    func sign(_ message: [UInt8]) -> [UInt8] {
        let digest = Array(SHA256.hash(data: message))
        let z = Scalar(bytes: digest).reduced()
        let keyBytes = d.bytes
        var counter: UInt32 = 0
        while true {
            var input = digest
            withUnsafeBytes(of: counter.bigEndian) { input.append(contentsOf: $0) }
            let nonce = Array(HMAC<SHA256>.authenticationCode(for: input, using: SymmetricKey(data: keyBytes)))
            counter += 1
            let k = Scalar(bytes: nonce)
            guard !k.isZero, k < Scalar.order,
                  let point = try? P256.KeyAgreement.PrivateKey(rawRepresentation: nonce) else { continue }
            let x = Array(point.publicKey.rawRepresentation.prefix(32))
            let r = Scalar(bytes: x).reduced()
            guard !r.isZero else { continue }
            let s = k.inverse().multiplied(by: z.adding(r.multiplied(by: d)))
            guard !s.isZero else { continue }
            return r.bytes + s.bytes
        }
    }

    /// The DER `ECDSA-Sig-Value` (`SEQUENCE { r INTEGER, s INTEGER }`) X.509 certificates carry.
    func signDER(_ message: [UInt8]) -> [UInt8] {
        let raw = sign(message)
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var value = Array(bytes.drop { $0 == 0 })
            if value.isEmpty { value = [0] }
            if value[0] & 0x80 != 0 { value.insert(0, at: 0) }
            return [0x02, UInt8(value.count)] + value
        }
        let body = integer(raw[0..<32]) + integer(raw[32..<64])
        return [0x30, UInt8(body.count)] + body
    }
}

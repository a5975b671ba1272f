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

/// A 256-bit unsigned integer modulo the P-256 group order n (four little-endian 64-bit limbs).
struct Scalar: Sendable, Comparable {
    var limbs: [UInt64]

    /// n = FFFFFFFF 00000000 FFFFFFFF FFFFFFFF BCE6FAAD A7179E84 F3B9CAC2 FC632551
    static let order = Scalar(limbs: [0xF3B9_CAC2_FC63_2551, 0xBCE6_FAAD_A717_9E84, 0xFFFF_FFFF_FFFF_FFFF, 0xFFFF_FFFF_0000_0000])

    init(limbs: [UInt64]) { self.limbs = limbs }

    /// From 32 big-endian bytes.
    init(bytes: [UInt8]) {
        var limbs = [UInt64](repeating: 0, count: 4)
        for (index, byte) in bytes.prefix(32).enumerated() {
            let limb = 3 - index / 8
            limbs[limb] = (limbs[limb] << 8) | UInt64(byte)
        }
        self.limbs = limbs
    }

    /// 32 big-endian bytes.
    var bytes: [UInt8] {
        var out: [UInt8] = []
        for limb in limbs.reversed() {
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: limb >> UInt64(shift))) }
        }
        return out
    }

    var isZero: Bool { limbs.allSatisfy { $0 == 0 } }
    private var isOdd: Bool { limbs[0] & 1 == 1 }

    static func < (a: Scalar, b: Scalar) -> Bool {
        for i in (0..<4).reversed() where a.limbs[i] != b.limbs[i] { return a.limbs[i] < b.limbs[i] }
        return false
    }

    /// `a + b` with the carry out of bit 256.
    private static func add(_ a: Scalar, _ b: Scalar) -> (Scalar, Bool) {
        var out = [UInt64](repeating: 0, count: 4)
        var carry: UInt64 = 0
        for i in 0..<4 {
            let (s1, o1) = a.limbs[i].addingReportingOverflow(b.limbs[i])
            let (s2, o2) = s1.addingReportingOverflow(carry)
            out[i] = s2
            carry = (o1 ? 1 : 0) + (o2 ? 1 : 0)
        }
        return (Scalar(limbs: out), carry != 0)
    }

    /// `a - b` (wrapping).
    private static func subtract(_ a: Scalar, _ b: Scalar) -> Scalar {
        var out = [UInt64](repeating: 0, count: 4)
        var borrow: UInt64 = 0
        for i in 0..<4 {
            let (d1, o1) = a.limbs[i].subtractingReportingOverflow(b.limbs[i])
            let (d2, o2) = d1.subtractingReportingOverflow(borrow)
            out[i] = d2
            borrow = (o1 ? 1 : 0) + (o2 ? 1 : 0)
        }
        return Scalar(limbs: out)
    }

    /// This value mod n, for values below 2^256 (at most one subtraction, as 2^256 < 2n).
    func reduced() -> Scalar { self < Scalar.order ? self : Scalar.subtract(self, Scalar.order) }

    /// `(self + other) mod n`, both below n.
    func adding(_ other: Scalar) -> Scalar {
        let (sum, carry) = Scalar.add(self, other)
        return carry || !(sum < Scalar.order) ? Scalar.subtract(sum, Scalar.order) : sum
    }

    /// `(self × other) mod n` by double-and-add, both below n.
    func multiplied(by other: Scalar) -> Scalar {
        var result = Scalar(limbs: [0, 0, 0, 0])
        for i in (0..<256).reversed() {
            result = result.adding(result)
            if (other.limbs[i / 64] >> UInt64(i % 64)) & 1 == 1 { result = result.adding(self) }
        }
        return result
    }

    private func halvedModOrder() -> Scalar {
        var value = self
        var carry = false
        if isOdd { (value, carry) = Scalar.add(value, Scalar.order) }
        var out = [UInt64](repeating: 0, count: 4)
        for i in 0..<4 {
            let high: UInt64 = i == 3 ? (carry ? 1 : 0) : value.limbs[i + 1] & 1
            out[i] = (value.limbs[i] >> 1) | (high << 63)
        }
        return Scalar(limbs: out)
    }

    private func shiftedRight() -> Scalar {
        var out = [UInt64](repeating: 0, count: 4)
        for i in 0..<4 { out[i] = (limbs[i] >> 1) | ((i < 3 ? limbs[i + 1] & 1 : 0) << 63) }
        return Scalar(limbs: out)
    }

    /// The inverse mod n (binary extended Euclid; n is prime and self is not zero).
    func inverse() -> Scalar {
        let one = Scalar(limbs: [1, 0, 0, 0])
        var u = self, v = Scalar.order
        var x1 = one, x2 = Scalar(limbs: [0, 0, 0, 0])
        while u != one && v != one {
            while !u.isOdd { u = u.shiftedRight(); x1 = x1.halvedModOrder() }
            while !v.isOdd { v = v.shiftedRight(); x2 = x2.halvedModOrder() }
            if !(u < v) {
                u = Scalar.subtract(u, v)
                x1 = x1 < x2 ? Scalar.subtract(Scalar.add(x1, Scalar.order).0, x2) : Scalar.subtract(x1, x2)
            } else {
                v = Scalar.subtract(v, u)
                x2 = x2 < x1 ? Scalar.subtract(Scalar.add(x2, Scalar.order).0, x1) : Scalar.subtract(x2, x1)
            }
        }
        return u == one ? x1 : x2
    }
}

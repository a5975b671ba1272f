/// A 256-bit unsigned integer modulo the P-256 group order n: four 64-bit limbs, `l0` the least significant
/// (stored inline, no heap: signing runs thousands of times per simulation).
struct Scalar: Sendable, Comparable {
    var l0: UInt64, l1: UInt64, l2: UInt64, l3: UInt64

    /// n = FFFFFFFF 00000000 FFFFFFFF FFFFFFFF BCE6FAAD A7179E84 F3B9CAC2 FC632551
    static let order = Scalar(0xF3B9_CAC2_FC63_2551, 0xBCE6_FAAD_A717_9E84, 0xFFFF_FFFF_FFFF_FFFF, 0xFFFF_FFFF_0000_0000)
    static let zero = Scalar(0, 0, 0, 0)
    static let one = Scalar(1, 0, 0, 0)

    init(_ l0: UInt64, _ l1: UInt64, _ l2: UInt64, _ l3: UInt64) {
        self.l0 = l0; self.l1 = l1; self.l2 = l2; self.l3 = l3
    }

    /// From 32 big-endian bytes.
    init(bytes: [UInt8]) {
        var limbs: [UInt64] = [0, 0, 0, 0]
        for (index, byte) in bytes.prefix(32).enumerated() {
            let limb = 3 - index / 8
            limbs[limb] = (limbs[limb] << 8) | UInt64(byte)
        }
        self.init(limbs[0], limbs[1], limbs[2], limbs[3])
    }

    /// 32 big-endian bytes.
    var bytes: [UInt8] {
        var out: [UInt8] = []
        for limb in [l3, l2, l1, l0] {
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: limb >> UInt64(shift))) }
        }
        return out
    }

    var isZero: Bool { (l0 | l1 | l2 | l3) == 0 }
    private var isOdd: Bool { l0 & 1 == 1 }

    private func bit(_ i: Int) -> Bool {
        let limb = i < 64 ? l0 : i < 128 ? l1 : i < 192 ? l2 : l3
        return (limb >> UInt64(i % 64)) & 1 == 1
    }

    static func < (a: Scalar, b: Scalar) -> Bool {
        if a.l3 != b.l3 { return a.l3 < b.l3 }
        if a.l2 != b.l2 { return a.l2 < b.l2 }
        if a.l1 != b.l1 { return a.l1 < b.l1 }
        return a.l0 < b.l0
    }

    /// `a + b` with the carry out of bit 256.
    private static func add(_ a: Scalar, _ b: Scalar) -> (Scalar, Bool) {
        let (s0, c0) = a.l0.addingReportingOverflow(b.l0)
        var (s1, carryOut1) = a.l1.addingReportingOverflow(b.l1)
        var carry1 = false
        if c0 { (s1, carry1) = s1.addingReportingOverflow(1) }
        let k1 = carryOut1 || carry1
        var (s2, c2) = a.l2.addingReportingOverflow(b.l2)
        var carry2 = false
        if k1 { (s2, carry2) = s2.addingReportingOverflow(1) }
        let k2 = c2 || carry2
        var (s3, c3) = a.l3.addingReportingOverflow(b.l3)
        var carry3 = false
        if k2 { (s3, carry3) = s3.addingReportingOverflow(1) }
        return (Scalar(s0, s1, s2, s3), c3 || carry3)
    }

    /// `a - b` (wrapping).
    private static func subtract(_ a: Scalar, _ b: Scalar) -> Scalar {
        let (d0, b0) = a.l0.subtractingReportingOverflow(b.l0)
        var (d1, b1) = a.l1.subtractingReportingOverflow(b.l1)
        var borrow1 = false
        if b0 { (d1, borrow1) = d1.subtractingReportingOverflow(1) }
        let k1 = b1 || borrow1
        var (d2, b2) = a.l2.subtractingReportingOverflow(b.l2)
        var borrow2 = false
        if k1 { (d2, borrow2) = d2.subtractingReportingOverflow(1) }
        let k2 = b2 || borrow2
        var (d3, _) = a.l3.subtractingReportingOverflow(b.l3)
        if k2 { d3 = d3 &- 1 }
        return Scalar(d0, d1, d2, d3)
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
        var result = Scalar.zero
        for i in (0..<256).reversed() {
            result = result.adding(result)
            if other.bit(i) { result = result.adding(self) }
        }
        return result
    }

    private func halvedModOrder() -> Scalar {
        var value = self
        var carry = false
        if isOdd { (value, carry) = Scalar.add(value, Scalar.order) }
        return Scalar((value.l0 >> 1) | (value.l1 << 63), (value.l1 >> 1) | (value.l2 << 63),
                      (value.l2 >> 1) | (value.l3 << 63), (value.l3 >> 1) | ((carry ? 1 : 0) << 63))
    }

    private func shiftedRight() -> Scalar {
        Scalar((l0 >> 1) | (l1 << 63), (l1 >> 1) | (l2 << 63), (l2 >> 1) | (l3 << 63), l3 >> 1)
    }

    /// The inverse mod n (binary extended Euclid; n is prime and self is not zero).
    func inverse() -> Scalar {
        var u = self, v = Scalar.order
        var x1 = Scalar.one, x2 = Scalar.zero
        while u != Scalar.one && v != Scalar.one {
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
        return u == Scalar.one ? x1 : x2
    }
}

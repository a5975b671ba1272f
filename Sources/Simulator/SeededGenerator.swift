/// SplitMix64: a small, fast, seedable generator. The simulator never uses the system generator, so one seed
/// always gives the same archives and the same truth.
struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    /// An independent stream for one subscriber (or one purpose), derived from the run's seed.
    init(seed: UInt64, stream: UInt64) {
        var mixer = SeededGenerator(seed: seed ^ (stream &* 0x9E37_79B9_7F4A_7C15))
        state = mixer.next() ^ stream
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// True with probability `p` (0...1).
    mutating func chance(_ p: Double) -> Bool { Double(next() >> 11) / Double(1 << 53) < p }

    /// A uniform integer in `range`.
    mutating func int(_ range: ClosedRange<Int64>) -> Int64 { Int64.random(in: range, using: &self) }

    /// Lowercase hex digits, `count` of them.
    mutating func hex(_ count: Int) -> String {
        let digits = Array("0123456789abcdef")
        return String((0..<count).map { _ in digits[Int(next() & 15)] })
    }

    /// A random RFC 4122 version 4 UUID string (upper case, as Apple writes `notificationUUID`).
    mutating func uuid() -> String {
        let h = Array(hex(32))
        let variant = Array("89ab")[Int(next() & 3)]
        return (String(h[0..<8]) + "-" + String(h[8..<12]) + "-4" + String(h[13..<16]) + "-" + String(variant)
                + String(h[17..<20]) + "-" + String(h[20..<32])).lowercased()
    }
}

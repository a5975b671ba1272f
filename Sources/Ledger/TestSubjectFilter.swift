/// The subjects (platform and subject) of test purchases as a Bloom filter of a fixed 2 MiB: whether a subject
/// may be one. A "no" is certain; a "maybe" is checked against the ledger (``SQLiteLedger/outcomeCounts(run:)``),
/// so the filter buys speed, never a count.
///
/// Fixed in size so that counting outcomes holds the same memory whatever the number of test purchases: with the
/// 2,593 test records of the bench ledger or 24,634 at 5 x, nearly every "maybe" is a test purchase; at a million
/// test subjects about one other subject in twenty would be checked needlessly. Positions come from `Hasher`,
/// seeded per process: a filter is built and asked within one count.
struct TestSubjectFilter {
    private let mask: UInt64
    private var words: [UInt64]

    /// A filter of 2^`bitsLog2` bits (at least 64): 2^24, 2 MiB, unless a test wants most subjects to seem held.
    init(bitsLog2: Int = 24) {
        let bitsLog2 = max(6, bitsLog2)
        mask = UInt64(1) << UInt64(bitsLog2) - 1
        words = [UInt64](repeating: 0, count: 1 << (bitsLog2 - 6))
    }

    mutating func insert(platform: UnsafeRawBufferPointer, subject: UnsafeRawBufferPointer) {
        let (first, second) = bits(platform: platform, subject: subject)
        words[first >> 6] |= 1 << UInt64(first & 63)
        words[second >> 6] |= 1 << UInt64(second & 63)
    }

    /// `false` when the subject is certainly not a test purchase's.
    func mayContain(platform: UnsafeRawBufferPointer, subject: UnsafeRawBufferPointer) -> Bool {
        let (first, second) = bits(platform: platform, subject: subject)
        return words[first >> 6] & 1 << UInt64(first & 63) != 0 && words[second >> 6] & 1 << UInt64(second & 63) != 0
    }

    /// Two positions from one 64-bit hash of the platform (length-prefixed) and the subject.
    private func bits(platform: UnsafeRawBufferPointer, subject: UnsafeRawBufferPointer) -> (Int, Int) {
        var hasher = Hasher()
        hasher.combine(platform.count)
        hasher.combine(bytes: platform)
        hasher.combine(bytes: subject)
        let hash = UInt64(bitPattern: Int64(hasher.finalize()))
        return (Int(hash & mask), Int(hash >> 32 & mask))
    }
}

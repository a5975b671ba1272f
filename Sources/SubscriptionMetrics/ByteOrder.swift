/// Row sorting: key columns compared as byte strings (DESIGN.md), never by locale or Unicode collation.
enum ByteOrder {
    /// `lhs < rhs` comparing the keys pairwise by their UTF-8 bytes.
    static func precedes(_ lhs: [String], _ rhs: [String]) -> Bool {
        for (a, b) in zip(lhs, rhs) where a != b {
            return a.utf8.lexicographicallyPrecedes(b.utf8)
        }
        return lhs.count < rhs.count
    }
}

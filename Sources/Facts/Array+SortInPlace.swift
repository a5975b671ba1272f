extension Array {
    /// Sorts the elements by `areInIncreasingOrder`, a total order that reads the two elements where they lie.
    ///
    /// Why not `sort(by:)`: a comparison of two values of a type that holds strings (a ``Fact`` holds six) copies
    /// both, retaining and releasing every string, and a sort makes n log n of them; report time sorts every
    /// subscription's facts, and those copies were most of its sorting time. Here the sort orders positions,
    /// the comparisons read the elements through pointers, and each element is then moved once, by swaps.
    @inlinable
    public mutating func sortInPlace(by areInIncreasingOrder: (UnsafePointer<Element>, UnsafePointer<Element>) -> Bool) {
        guard count > 1 else { return }
        var source = [Int](indices)
        withUnsafeBufferPointer { elements in
            let base = elements.baseAddress.unsafelyUnwrapped
            source.sort { areInIncreasingOrder(base + $0, base + $1) }
        }
        // source[i] is where the element that belongs at i lies now; each cycle of that permutation is put in place
        // by swaps, which move elements without copying them.
        withUnsafeMutableBufferPointer { elements in
            for start in source.indices where source[start] != start {
                var current = start
                while source[current] != start {
                    let next = source[current]
                    elements.swapAt(current, next)
                    source[current] = current
                    current = next
                }
                source[current] = current
            }
        }
    }
}

import Facts

/// Reads what ``PartialWriter`` wrote, checking every value on the way: a file that ends early, a varint that
/// does not fit, a count larger than the bytes left, text that is not UTF-8, a month outside the report's months
/// or a platform it does not know is `PartialStateError.damaged`, never a crash or a huge allocation.
struct PartialReader {
    private let bytes: [UInt8]
    private var offset: Int
    /// Where the body ends (the checksum follows it).
    private let end: Int

    /// A reader of `bytes[range]`.
    init(_ bytes: [UInt8], range: Range<Int>) {
        self.bytes = bytes
        offset = range.lowerBound
        end = range.upperBound
    }

    var isAtEnd: Bool { offset == end }

    /// The largest count of events a decoded state may hold in one cell (2⁴⁰, a trillion): far above any real
    /// report, far enough below `Int.max` that adding millions of partials never overflows.
    static let maximumTally = 1 << 40

    mutating func unsigned() throws(PartialStateError) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < end else { throw .damaged("it ends early") }
            let byte = bytes[offset]
            offset += 1
            guard shift < 64, shift < 63 || byte <= 1 else { throw .damaged("a number does not fit in 64 bits") }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }

    mutating func signed() throws(PartialStateError) -> Int64 {
        let zigzag = try unsigned()
        return Int64(bitPattern: (zigzag >> 1) ^ (0 &- (zigzag & 1)))
    }

    /// A signed `Int`.
    mutating func int() throws(PartialStateError) -> Int {
        Int(try signed())
    }

    /// A number of events (≥ 0, at most ``maximumTally``).
    mutating func tally() throws(PartialStateError) -> Int {
        let value = try unsigned()
        guard value <= UInt64(Self.maximumTally) else { throw .damaged("a count of \(value) is beyond any report") }
        return Int(value)
    }

    /// A count of elements that follow, each at least one byte long: never more than the bytes left.
    mutating func count() throws(PartialStateError) -> Int {
        let value = try unsigned()
        guard value <= UInt64(end - offset) else { throw .damaged("it ends early") }
        return Int(value)
    }

    mutating func string() throws(PartialStateError) -> String {
        let length = try count()
        let utf8 = bytes[offset..<offset + length]
        offset += length
        let text = String(decoding: utf8, as: UTF8.self)
        // Decoding replaces invalid sequences, so the text reads back as the same bytes only when it was UTF-8.
        guard text.utf8.elementsEqual(utf8) else { throw .damaged("a text is not UTF-8") }
        return text
    }

    mutating func platform() throws(PartialStateError) -> Platform {
        let name = try string()
        guard let platform = Platform(rawValue: name) else { throw .damaged("unknown platform `\(name)`") }
        return platform
    }

    /// A month number within the months `months` reports (`firstMonth ... lastMonth`).
    mutating func month(in months: MonthTable) throws(PartialStateError) -> Int {
        let month = try int()
        guard months.firstMonth <= month, month <= months.lastMonth else {
            throw .damaged("month \(MonthTable.label(month)) is outside the report's months")
        }
        return month
    }

    /// What ``PartialWriter/optionalMonth(_:)`` wrote.
    mutating func optionalMonth(in months: MonthTable) throws(PartialStateError) -> Int? {
        switch try unsigned() {
        case 0: return nil
        case 1: return try month(in: months)
        case let flag: throw .damaged("unexpected flag \(flag)")
        }
    }
}

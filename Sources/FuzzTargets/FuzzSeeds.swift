import Foundation
import Ingest
import Simulator
import SystemZlib

/// Seed inputs for each ``FuzzTarget``, cut from what `subledger simulate` writes: realistic records of every
/// payload type, the archives themselves, and the JWS they carry. `make fuzz` generates them (they are not
/// committed: a few MB); hand-made seeds under `Fuzz/Seeds/<target>/` are committed and used besides.
public enum FuzzSeeds {
    /// Largest seed written: libFuzzer's `-max_len` follows the largest seed, and small inputs run faster.
    public static let maximumSize = 64 * 1024

    /// Writes the seeds of `target` into `directory` (created when missing) from the simulation in `simulation`
    /// (its `archives/`), simulated first when missing: 60 subscribers over 6 months with the seed whose signing
    /// chain the harnesses trust (``FuzzRunner/simulationSeed``).
    /// - Returns: how many seeds were written.
    @discardableResult
    public static func write(_ target: FuzzTarget, simulation: String, into directory: String) throws -> Int {
        if !FileManager.default.fileExists(atPath: simulation + "/archives") {
            try Simulation(subscribers: 60, months: 6, seed: FuzzRunner.simulationSeed).write(to: simulation)
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let archives = try files(under: simulation + "/archives")
        var seeds: [[UInt8]] = []
        switch target {
        case .json, .record:
            seeds = sample(try records(of: archives), count: 300).map(\.bytes)
        case .lines:
            seeds = chunks(try records(of: archives), size: 8).map { joined($0.map(\.bytes), separator: [0x0A]) }
        case .document:
            seeds = chunks(try records(of: archives), size: 4).map { [0x5B] + joined($0.map(\.bytes), separator: [0x2C]) + [0x5D] }
        case .gzip:
            seeds = try archives.filter { $0.hasSuffix(".gz") && !$0.hasSuffix(".tar.gz") }.map(contents)
        case .tar:
            seeds = try archives.filter { $0.hasSuffix(".tar.gz") || $0.hasSuffix(".tgz") }.compactMap { gunzip(try contents($0)) }
        case .zip:
            seeds = try archives.filter { $0.hasSuffix(".zip") }.map(contents)
        case .jwsDecode, .jwsVerify:
            seeds = sample(try records(of: archives).flatMap { jwsStrings(in: $0.bytes) }, count: 200).map { Array($0.utf8) }
        case .apple, .google:
            let platform = target == .apple ? "apple" : "google"
            let parser = RecordParser(times: FuzzRunner.times)
            let mine = try records(of: archives).filter { record in
                guard case .success(let parsed) = parser.parse(record) else { return false }
                return parsed.source.platform.rawValue == platform
            }
            // A few records per seed: small inputs run faster, and the fuzzer joins inputs by itself.
            seeds = chunks(mine, size: 3).map { joined($0.map(\.bytes), separator: [0x0A]) }
        }
        var written = 0
        for seed in seeds where seed.count <= maximumSize {
            let name = String(format: "sim-%04d", written)
            try Data(seed).write(to: URL(fileURLWithPath: directory + "/" + name))
            written += 1
        }
        return written
    }

    /// Every file under `directory`, sorted.
    static func files(under directory: String) throws -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: directory) else { return [] }
        var paths: [String] = []
        while let relative = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            let path = directory + "/" + relative
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue { paths.append(path) }
        }
        return paths.sorted()
    }

    static func contents(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Every record of the archives, in order.
    static func records(of archives: [String]) throws -> [RawRecord] {
        var records: [RawRecord] = []
        for path in archives {
            _ = try ArchiveReader().read(path: path) { records.append($0) }
        }
        return records
    }

    /// `count` elements spread evenly over `elements` (all of them when there are fewer).
    static func sample<T>(_ elements: [T], count: Int) -> [T] {
        guard elements.count > count else { return elements }
        return (0..<count).map { elements[$0 * elements.count / count] }
    }

    /// Consecutive groups of `size`, at most 100 of them spread over the whole.
    static func chunks<T>(_ elements: [T], size: Int) -> [[T]] {
        let groups = stride(from: 0, to: elements.count, by: size).map { Array(elements[$0..<min($0 + size, elements.count)]) }
        return sample(groups, count: 100)
    }

    static func joined(_ parts: [[UInt8]], separator: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        for (index, part) in parts.enumerated() {
            if index > 0 { out += separator }
            out += part
        }
        return out
    }

    /// The compact JWS strings anywhere in a record: the record itself, or strings inside its JSON.
    static func jwsStrings(in bytes: [UInt8]) -> [String] {
        guard let value = try? JSONParser.parse(bytes) else {
            let text = String(decoding: bytes, as: UTF8.self)
            return CompactJWS.looksLikeJWS(text) ? [text] : []
        }
        var found: [String] = []
        var pending = [value]
        while let next = pending.popLast() {
            switch next {
            case .string(let text) where CompactJWS.looksLikeJWS(text):
                found.append(text)
                if let jws = CompactJWS(text) { pending.append(jws.payload) }
            case .array(let elements): pending += elements
            case .object(let object): pending += object.values
            default: break
            }
        }
        return found
    }

    /// The content of a gzip file (one member, up to a little over ``maximumSize``), or `nil` when it does not
    /// inflate. The stream lives at a fixed address: zlib keeps a pointer back to it.
    static func gunzip(_ bytes: [UInt8]) -> [UInt8]? {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer { stream.deallocate() }
        guard inflateInit2_(stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { inflateEnd(stream) }
        var input = bytes
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let status: Int32 = input.withUnsafeMutableBufferPointer { source in
            stream.pointee.next_in = source.baseAddress
            stream.pointee.avail_in = uInt(source.count)
            var status = Z_OK
            while status == Z_OK && output.count <= maximumSize {
                status = chunk.withUnsafeMutableBufferPointer { target in
                    stream.pointee.next_out = target.baseAddress
                    stream.pointee.avail_out = uInt(target.count)
                    return inflate(stream, Z_NO_FLUSH)
                }
                output += chunk[..<(chunk.count - Int(stream.pointee.avail_out))]
            }
            return status
        }
        return status == Z_STREAM_END ? output : nil
    }
}

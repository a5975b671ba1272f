import Foundation

/// Streams the records of one input file (`inputs.md`, "Containers"): JSON lines, JSON documents and arrays,
/// gzip, tar and zip, nested as archives are, each recognised by its content (``ContainerKind``).
///
/// Memory stays constant in the file size: the file is read in 256 KiB chunks and pushed through a chain of
/// stages (inflate, tar, record splitter); only one record at a time is buffered, bounded at 64 MiB.
///
/// Damage (a cut or corrupt gzip, tar or zip, a member that is not an input) is returned, not thrown: every
/// record before it has been yielded, and reading of the other members goes on where the container allows.
/// Only an error thrown by `sink` is rethrown.
///
/// ``Provenance/member`` is the member's path in its archive; for a member of an archive that is itself a
/// member, the paths are joined with `!` (`exports/2024.tar!march.ndjson`), as `jar:` URLs do.
public struct ArchiveReader: Sendable {
    /// The longest record yielded whole; a longer one is cut here (and quarantined as malformed).
    public let maximumRecordBytes: Int

    /// A reader with the default limits (256 KiB chunks, records cut at 64 MiB).
    public init() {
        self.init(maximumRecordBytes: StreamLimits.maximumRecordBytes)
    }

    init(maximumRecordBytes: Int) {
        self.maximumRecordBytes = maximumRecordBytes
    }

    /// Whether a file is an input, from its first bytes (for gzip, from the first bytes it inflates to).
    public enum Recognition: Sendable, Hashable {
        case input
        /// Not JSON, gzip, tar or zip: the sentence that says what it looks like (`skipped_files`).
        case notAnInput(String)
        /// The file cannot be opened or read.
        case unreadable(String)
    }

    /// Looks at the start of `path` (at most a few kB, inflated for gzip) to tell whether it is an input.
    /// A gzip that is cut off or corrupt right at its start is an input: reading it reports the damage.
    public func recognise(_ path: InputPath) -> Recognition {
        let file: OpenFile
        do {
            file = try OpenFile(path)
        } catch {
            return .unreadable(error.reason)
        }
        let head: [UInt8]
        do {
            head = try file.source.bytes(at: 0, count: Int(min(file.source.size, Int64(ContainerKind.headSize)))) ?? []
        } catch {
            return .unreadable(error.reason)
        }
        let name = String(decoding: path.lastComponent, as: UTF8.self)
        switch ContainerKind.recognise(head: head, name: name) {
        case .failure(let notAnInput):
            return .notAnInput(notAnInput.reason)
        case .success(.gzip):
            guard let inflated = Self.inflatedHead(of: file.source) else { return .input }
            switch ContainerKind.recognise(head: inflated, name: Self.innerName(of: name)) {
            case .success: return .input
            case .failure(let notAnInput): return .notAnInput("gzip of something else: \(notAnInput.reason)")
            }
        case .success:
            return .input
        }
    }

    /// Reads `path`, calling `sink` with each record in file order.
    /// - Returns: the damage found, empty for an intact file. A file that is not an input is one damage at
    ///   offset 0 saying so (``recognise(_:)`` tells it before reading).
    public func read(path: InputPath, sink: (RawRecord) throws -> Void) throws -> [Damage] {
        let file: OpenFile
        do {
            file = try OpenFile(path)
        } catch {
            return [Damage(file: path.description, offset: 0, reason: error.reason)]
        }
        return try read(source: file.source, file: path.description, name: String(decoding: path.lastComponent, as: UTF8.self),
                        sink: sink)
    }

    /// ``read(path:sink:)`` of a path given as text.
    public func read(path: String, sink: (RawRecord) throws -> Void) throws -> [Damage] {
        try read(path: InputPath(path), sink: sink)
    }

    /// Reads an input held in memory as if it were the file `name` (provenance and messages name it).
    public func read(bytes: [UInt8], name: String, sink: (RawRecord) throws -> Void) throws -> [Damage] {
        try read(source: MemoryByteSource(contents: bytes), file: name, name: name, sink: sink)
    }

    private func read(source: any ByteSource, file: String, name: String, sink: (RawRecord) throws -> Void) throws -> [Damage] {
        func emit(_ record: RawRecord) throws {
            do { try sink(record) } catch { throw SinkFailure(underlying: error) }
        }
        do {
            var damages: [Damage] = []
            do {
                let head = try source.bytes(at: 0, count: Int(min(source.size, Int64(ContainerKind.headSize)))) ?? []
                switch ContainerKind.recognise(head: head, name: name) {
                case .failure(let notAnInput):
                    return [Damage(file: file, offset: 0, reason: "not an input: " + notAnInput.reason)]
                case .success(.zip):
                    let reader = ZipReader(file: file, source: source) { [self] member in
                        memberStages(member: member, file: file, parent: nil, depth: 1)
                    }
                    return try reader.read(emit: emit)
                case .success(let kind):
                    var stage = try stages(for: kind, file: file, member: nil, name: name, depth: 0)
                    try stream(source, into: &stage, damages: &damages, emit: emit)
                }
            } catch let damage as StageDamage {
                damages.append(Damage(file: file, offset: damage.offset, reason: damage.reason))
            }
            return damages
        } catch let failure as SinkFailure {
            throw failure.underlying
        }
    }

    /// Containers read inside one another at most (a tar of gzipped logs inside a gzip is 3): a file nesting
    /// gzips or tars thousands deep would hold an inflater per level and overflow the stack; none is real.
    static let maximumNesting = 16

    /// The stages for an archive member, `depth` containers deep: its content is recognised when its first bytes
    /// arrive.
    func memberStages(member: String, file: String, parent: String?, depth: Int) -> any StreamStage {
        let joined = parent.map { "\($0)!\(member)" } ?? member
        if Self.isHidden(member: member) { return PassedOver() }
        return SniffingStage(name: member, label: nil) { [self] kind throws(StageDamage) in
            try stages(for: kind, file: file, member: joined, name: member, depth: depth)
        }
    }

    /// The chain of stages that turns bytes of `kind` into records. A zip met here is inside another archive or a
    /// gzip: that nesting is not one of the containers `inputs.md` lists (and a zip cannot be streamed: its
    /// directory is at its end), so it is reported as damage naming the member, as is a container more than
    /// ``maximumNesting`` deep (`depth` counts the containers around this content).
    func stages(for kind: ContainerKind, file: String, member: String?, name: String,
                depth: Int) throws(StageDamage) -> any StreamStage {
        if depth >= Self.maximumNesting, kind == .gzip || kind == .tar {
            throw StageDamage(offset: 0, reason: "\(member ?? file): archives nested more than \(Self.maximumNesting) deep "
                + "(a gzip or tar inside \(Self.maximumNesting) others) are not read; extract the inner ones and ingest those")
        }
        switch kind {
        case .lines:
            return LineSplitter(file: file, member: member, maximumRecordBytes: maximumRecordBytes)
        case .json:
            return JSONDocumentSplitter(file: file, member: member, maximumRecordBytes: maximumRecordBytes)
        case .gzip:
            let innerName = Self.innerName(of: name)
            let inner = SniffingStage(name: innerName, label: "the gzip content of \(member ?? file)") { [self] kind throws(StageDamage) in
                try stages(for: kind, file: file, member: member, name: innerName, depth: depth + 1)
            }
            return try GzipStage(inner: inner, label: member ?? file)
        case .tar:
            return TarStage(file: file, label: member ?? file) { [self] path in
                memberStages(member: path, file: file, parent: member, depth: depth + 1)
            }
        case .zip:
            throw StageDamage(offset: 0, reason: "\(member ?? file): a zip inside another archive is not read; extract it and ingest the zip itself")
        }
    }

    /// Whether an archive member is hidden, as a file in a folder is (inputs.md: "Files whose names start with `.`
    /// are not inputs"): its name or a folder on its path starts with `.` (`./` excepted). macOS writes such
    /// members into the archives it makes: `._x.ndjson` beside `x.ndjson` (in a zip under `__MACOSX/`), which
    /// hold the file's attributes (its resource fork), not records.
    static func isHidden(member: String) -> Bool {
        member.split(separator: "/").contains { $0.first == "." && $0 != "." && $0 != ".." }
    }

    /// The name of a gzip's content: `x.ndjson.gz` holds `x.ndjson`, `x.tgz` holds `x.tar`.
    static func innerName(of name: String) -> String {
        let lower = name.lowercased()
        if lower.hasSuffix(".tgz") { return String(name.dropLast(4)) + ".tar" }
        if lower.hasSuffix(".gz") { return String(name.dropLast(3)) }
        return name
    }

    /// The first bytes a gzip inflates to (up to ``ContainerKind/headSize``); `nil` when it does not inflate.
    static func inflatedHead(of source: any ByteSource) -> [UInt8]? {
        struct Enough: Error {}
        guard let inflater = try? Inflater(windowBits: 15 + 16),
              let compressed = try? source.bytes(at: 0, count: Int(min(source.size, 64 * 1024))) else { return nil }
        var head: [UInt8] = []
        do {
            _ = try compressed.withUnsafeBytes { bytes in
                try inflater.inflate(bytes) { output, _ in
                    head.append(contentsOf: output.prefix(ContainerKind.headSize - head.count))
                    if head.count >= ContainerKind.headSize { throw Enough() }
                }
            }
        } catch is Enough {
            return head
        } catch {
            return nil
        }
        return head.isEmpty ? nil : head
    }

    /// Pushes the source through `stage` in chunks, then finishes it.
    private func stream(_ source: any ByteSource, into stage: inout any StreamStage, damages: inout [Damage],
                        emit: (RawRecord) throws -> Void) throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: StreamLimits.chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        var offset: Int64 = 0
        while true {
            let count = try source.read(at: offset, into: buffer)
            if count == 0 { break }
            try stage.write(UnsafeRawBufferPointer(rebasing: buffer[..<count]), origin: ChunkOrigin(offset: offset, linear: true),
                            damages: &damages, emit: emit)
            offset += Int64(count)
        }
        try stage.finish(origin: ChunkOrigin(offset: offset, linear: true), damages: &damages, emit: emit)
    }
}

/// A regular file opened for reading by its bytes; closed when the value goes away.
final class OpenFile {
    let source: FileByteSource

    init(_ path: InputPath) throws(StageDamage) {
        let descriptor = path.withCString { open($0, O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
        guard descriptor >= 0 else {
            throw StageDamage(offset: 0, reason: "cannot open: \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw StageDamage(offset: 0, reason: "not a regular file")
        }
        source = FileByteSource(descriptor: descriptor, size: Int64(info.st_size))
    }

    deinit { close(source.descriptor) }
}

/// The stage of an archive member that is not an input (``ArchiveReader/isHidden(member:)``): its bytes are read
/// past, nothing is made of them.
struct PassedOver: StreamStage {
    mutating func write(_ chunk: UnsafeRawBufferPointer, origin: ChunkOrigin, damages: inout [Damage],
                        emit: (RawRecord) throws -> Void) throws {}

    mutating func finish(origin: ChunkOrigin, damages: inout [Damage], emit: (RawRecord) throws -> Void) throws {}
}

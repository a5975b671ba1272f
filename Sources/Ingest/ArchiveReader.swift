import Foundation

/// Streams the records of one input file (`inputs.md`, "Containers"): `.ndjson`/`.jsonl`, `.json`, gzip of
/// those, tar (plain or gzip) and zip, members of any supported kind.
///
/// Memory stays constant in the file size: the file is read in 256 KiB chunks and pushed through a chain of
/// stages (inflate, tar, record splitter); only one record at a time is buffered, bounded at 64 MiB.
///
/// Damage (a cut or corrupt gzip, tar or zip, a member of an unsupported type) is returned, not thrown: every
/// record before it has been yielded, and reading of the other members goes on where the container allows.
/// Only an error thrown by `sink` is rethrown.
///
/// ``Provenance/member`` is the member's path in its archive; for a member of an archive that is itself a
/// member, the paths are joined with `!` (`exports/2024.zip!march.ndjson`), as `jar:` URLs do.
public struct ArchiveReader: Sendable {
    let maximumRecordBytes: Int

    /// A reader with the default limits (256 KiB chunks, records cut at 64 MiB).
    public init() {
        self.init(maximumRecordBytes: StreamLimits.maximumRecordBytes)
    }

    init(maximumRecordBytes: Int) {
        self.maximumRecordBytes = maximumRecordBytes
    }

    /// Reads `path`, calling `sink` with each record in file order.
    /// - Returns: the damage found, empty for an intact file.
    public func read(path: String, sink: (RawRecord) throws -> Void) throws -> [Damage] {
        func emit(_ record: RawRecord) throws {
            do { try sink(record) } catch { throw SinkFailure(underlying: error) }
        }
        do {
            guard let kind = ContainerKind(name: path) else {
                return [Damage(file: path, offset: 0, reason: "unsupported file type")]
            }
            if case .zip = kind {
                let reader = ZipReader(path: path) { [self] member throws(StageDamage) in
                    try stages(for: member, file: path, parent: nil)
                }
                return try reader.read(emit: emit)
            }
            var damages: [Damage] = []
            do {
                var stage = try stages(for: kind, file: path, member: nil)
                try readFile(path, into: &stage, damages: &damages, emit: emit)
            } catch let damage as StageDamage {
                damages.append(Damage(file: path, offset: damage.offset, reason: damage.reason))
            }
            return damages
        } catch let failure as SinkFailure {
            throw failure.underlying
        }
    }

    /// The stages for an archive member, or `nil` for a member of an unsupported type.
    func stages(for member: String, file: String, parent: String?) throws(StageDamage) -> (any StreamStage)? {
        guard let kind = ContainerKind(name: member) else { return nil }
        let name = parent.map { "\($0)!\(member)" } ?? member
        return try stages(for: kind, file: file, member: name)
    }

    /// The chain of stages that turns bytes of `kind` into records. A zip met here is inside another archive or a
    /// gzip (a zip file on disk goes to ``ZipReader``, through ZIPFoundation): that nesting is not one of the
    /// containers `inputs.md` lists, so it is reported as damage naming the member rather than parsed by hand.
    func stages(for kind: ContainerKind, file: String, member: String?) throws(StageDamage) -> any StreamStage {
        switch kind {
        case .lines:
            return LineSplitter(file: file, member: member, maximumRecordBytes: maximumRecordBytes)
        case .json:
            return JSONDocumentSplitter(file: file, member: member, maximumRecordBytes: maximumRecordBytes)
        case .gzip(let inner):
            return try GzipStage(inner: try stages(for: inner, file: file, member: member), label: member ?? file)
        case .tar:
            return TarStage(file: file, label: member ?? file) { [self] path throws(StageDamage) in
                try stages(for: path, file: file, parent: member)
            }
        case .zip:
            throw StageDamage(offset: 0, reason: "\(member ?? file): a zip inside another archive is not read; extract it and ingest the zip itself")
        }
    }

    /// Pushes the file through `stage` in chunks, then finishes it.
    private func readFile(_ path: String, into stage: inout any StreamStage, damages: inout [Damage],
                          emit: (RawRecord) throws -> Void) throws {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else {
            throw StageDamage(offset: 0, reason: "cannot open: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: StreamLimits.chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        var offset: Int64 = 0
        while true {
            let count = Foundation.read(descriptor, buffer.baseAddress, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw StageDamage(offset: offset, reason: "read error: \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            try stage.write(UnsafeRawBufferPointer(rebasing: buffer[..<count]), origin: ChunkOrigin(offset: offset, linear: true),
                            damages: &damages, emit: emit)
            offset += Int64(count)
        }
        try stage.finish(origin: ChunkOrigin(offset: offset, linear: true), damages: &damages, emit: emit)
    }
}

/// The stage at the top of every archive member and gzip's content: holds the first bytes until it can tell
/// what they are (``ContainerKind/recognise(head:name:)``: at once for gzip, zip and JSON text, after a few kB
/// otherwise), then builds the stages for that kind and hands them everything, the held bytes first.
///
/// Content that is no input kind is damage naming what it looks like (for the member or gzip; a file on disk
/// that is not an input is skipped before it is read, see ``ArchiveReader/recognise(_:)``).
struct SniffingStage: StreamStage {
    typealias MakeStages = (_ kind: ContainerKind) throws(StageDamage) -> any StreamStage

    /// The name the content goes by (a member's path; a gzip's name without `.gz`), for the JSON layout.
    private let name: String
    /// What the content is called in messages (`the content of x.gz`); `nil` where the caller names it (a
    /// member's damage is prefixed with the member's path).
    private let label: String?
    private let makeStages: MakeStages
    private var inner: (any StreamStage)?
    private var head: [UInt8] = []
    /// Where the first held byte lies in the file.
    private var headOrigin: ChunkOrigin?

    init(name: String, label: String?, makeStages: @escaping MakeStages) {
        self.name = name
        self.label = label
        self.makeStages = makeStages
    }

    mutating func write(_ chunk: UnsafeRawBufferPointer, origin: ChunkOrigin, damages: inout [Damage],
                        emit: (RawRecord) throws -> Void) throws {
        if inner != nil {
            try inner!.write(chunk, origin: origin, damages: &damages, emit: emit)
            return
        }
        if headOrigin == nil { headOrigin = origin }
        let take = min(ContainerKind.headSize - head.count, chunk.count)
        head.append(contentsOf: chunk[..<take])
        guard head.count >= ContainerKind.headSize || ContainerKind.isConclusive(head) else { return }
        try decide(damages: &damages, emit: emit)
        if take < chunk.count {
            try inner!.write(UnsafeRawBufferPointer(rebasing: chunk[take...]),
                             origin: ChunkOrigin(offset: origin.offset(at: take), linear: origin.linear),
                             damages: &damages, emit: emit)
        }
    }

    mutating func finish(origin: ChunkOrigin, damages: inout [Damage], emit: (RawRecord) throws -> Void) throws {
        if inner == nil { try decide(damages: &damages, emit: emit) }
        try inner!.finish(origin: origin, damages: &damages, emit: emit)
    }

    /// Builds the stages for the held bytes and replays them.
    private mutating func decide(damages: inout [Damage], emit: (RawRecord) throws -> Void) throws {
        let origin = headOrigin ?? ChunkOrigin(offset: 0, linear: false)
        switch ContainerKind.recognise(head: head, name: name) {
        case .success(let kind):
            var stages = try makeStages(kind)
            let held = head
            head = []
            try held.withUnsafeBytes { bytes in
                try stages.write(bytes, origin: origin, damages: &damages, emit: emit)
            }
            inner = stages
        case .failure(let notAnInput):
            throw StageDamage(offset: origin.offset, reason: (label.map { "\($0) is " } ?? "") + "not an input: " + notAnInput.reason)
        }
    }
}

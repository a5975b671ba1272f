import Facts
import Foundation

/// Turns the inputs a user named (files, folders, glob patterns) into the files to read and the files found but
/// not read (`inputs.md`, `cli.md`).
///
/// - A regular file named directly is kept, whatever its name: whether it is an input is decided by its content
///   (``ArchiveReader/recognise(_:)``), when it is read.
/// - A folder is walked recursively and every regular file in it is kept. Hidden entries (names starting with
///   `.`, such as `.git` or macOS `._*` resource forks) are not inputs and are passed over without a word, as a
///   shell would. Anything else found there is listed in ``Expansion/skipped`` with its reason: FIFOs, sockets
///   and devices (opening a FIFO would wait forever), symbolic links that loop or lead nowhere, links to folders
///   (not followed, so a walk never cycles).
/// - A pattern with `*`, `?` or `[...]` (and `**` for any number of folders) is matched segment by segment with
///   `fnmatch(3)`; matched folders are walked, matched files kept, as above.
///
/// Paths are bytes (``InputPath``): a name that is not valid UTF-8 is read like any other.
///
/// The result is deterministic: inputs in the order given, a file named twice listed once (first place wins).
/// A pattern's files are sorted by path (bytewise); a folder's are spread by source (``spread(_:under:)``).
public enum InputExpander {
    /// What the inputs stand for.
    public struct Expansion: Sendable, Hashable {
        /// Regular files to read, in order.
        public var files: [InputPath]
        /// Entries found in folders (or matched by patterns) that are not regular files, with the reason.
        public var skipped: [IngestStatistics.Skipped]

        public init(files: [InputPath] = [], skipped: [IngestStatistics.Skipped] = []) {
            self.files = files
            self.skipped = skipped
        }
    }

    /// - Throws: ``InputError`` for a path that does not exist or is not a regular file or folder (a FIFO, a
    ///   symbolic link loop), a folder that holds no file, and a pattern that matches none: each is a usage error,
    ///   most often a typo in a nightly job, which must not look like a run that found nothing new.
    public static func expand(_ inputs: [InputPath]) throws(InputError) -> Expansion {
        var result = Expansion()
        var seen: Set<InputPath> = []
        var seenSkipped: Set<String> = []
        for input in inputs {
            let expansion = try expand(input)
            for path in expansion.files where seen.insert(path).inserted {
                result.files.append(path)
            }
            for entry in expansion.skipped where seenSkipped.insert(entry.file).inserted {
                result.skipped.append(entry)
            }
        }
        return result
    }

    /// ``expand(_:)`` of paths given as text.
    public static func expand(_ inputs: [String]) throws(InputError) -> Expansion {
        try expand(inputs.map(InputPath.init))
    }

    static func expand(_ input: InputPath) throws(InputError) -> Expansion {
        switch Entry(input, followingLinks: true) {
        case .file:
            return Expansion(files: [input])
        case .directory:
            var expansion = Expansion()
            if case .failure(let error) = walk(input, into: &expansion) {
                throw InputError(input: input.description, reason: "cannot read the folder: \(error.message)")
            }
            guard !expansion.files.isEmpty || !expansion.skipped.isEmpty else {
                throw InputError(input: input.description, reason: "the folder holds no files (hidden files are not inputs)")
            }
            var sortedExpansion = sorted(expansion)
            sortedExpansion.files = spread(sortedExpansion.files, under: input)
            return sortedExpansion
        case .missing where isPattern(input):
            let expansion = glob(input)
            guard !expansion.files.isEmpty || !expansion.skipped.isEmpty else {
                throw InputError(input: input.description, reason: "the pattern matches no file")
            }
            return sorted(expansion)
        case .missing:
            throw InputError(input: input.description, reason: "no such file or directory")
        case .other(let reason):
            throw InputError(input: input.description, reason: reason)
        }
    }

    /// Whether `path` has glob metacharacters.
    static func isPattern(_ path: InputPath) -> Bool {
        path.bytes.contains { $0 == UInt8(ascii: "*") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "[") }
    }

    static func sorted(_ expansion: Expansion) -> Expansion {
        Expansion(files: expansion.files.sorted(),
                  skipped: expansion.skipped.sorted { $0.file.utf8.lexicographicallyPrecedes($1.file.utf8) })
    }

    /// A folder's files (sorted by path) in reading order: grouped by the first folder below `directory` (files
    /// directly in it form one group), each group in path order, the groups spread evenly over the whole run:
    /// the `k`-th of a group's `n` files sits at `(2k + 1) / 2n` of the way, ties in the groups' path order.
    ///
    /// Why: archives are kept by source, and sources cost different stages. Signed App Store notifications are
    /// few, large records that keep the workers verifying signatures; Play and backend logs are many small ones
    /// that keep the single store thread writing. Read one folder after the other, each stage idled half the
    /// run; mixed, both run at once (on the 20,000-subscriber bench, ingest took about a tenth less). The ledger
    /// is the same in any order (records keep their smallest provenance, facts their earliest observation);
    /// only which of two copies a file's counts call `used` or `duplicate` follows the order.
    static func spread(_ files: [InputPath], under directory: InputPath) -> [InputPath] {
        let prefix = directory.bytes.last == UInt8(ascii: "/") ? directory.bytes : directory.bytes + [UInt8(ascii: "/")]
        var groups: [[UInt8]: [InputPath]] = [:]
        for file in files {
            let rest = file.bytes.starts(with: prefix) ? file.bytes.dropFirst(prefix.count) : file.bytes[...]
            let group = rest.firstIndex(of: UInt8(ascii: "/")).map { Array(rest[..<$0]) } ?? []
            groups[group, default: []].append(file)
        }
        guard groups.count > 1 else { return files }
        let ordered = groups.keys.sorted { $0.lexicographicallyPrecedes($1) }.enumerated().map { rank, key in
            (rank: rank, files: groups[key]!)
        }
        var placed: [(index: Int, count: Int, rank: Int, file: InputPath)] = []
        placed.reserveCapacity(files.count)
        for group in ordered {
            for (index, file) in group.files.enumerated() {
                placed.append((index, group.files.count, group.rank, file))
            }
        }
        placed.sort { a, b in
            // (2i + 1) / 2n compared exactly, as (2i + 1) · n' against (2i' + 1) · n.
            let left = (2 * a.index + 1) * b.count
            let right = (2 * b.index + 1) * a.count
            return left != right ? left < right : a.rank < b.rank
        }
        return placed.map(\.file)
    }

    static func isHidden(_ name: some Collection<UInt8>) -> Bool { name.first == UInt8(ascii: ".") }

    /// Adds the regular files under `directory`, at any depth, to `expansion`, and what is skipped there.
    /// - Returns: a failure when `directory` itself cannot be read (a sub-folder that cannot is skipped).
    static func walk(_ directory: InputPath, into expansion: inout Expansion) -> Result<Void, FolderError> {
        var pending = [directory]
        while let current = pending.popLast() {
            let names: [[UInt8]]
            switch entries(of: current) {
            case .success(let found):
                names = found
            case .failure(let error):
                if current == directory { return .failure(error) }
                expansion.skipped.append(.init(file: current.description, reason: "cannot read the folder: \(error.message)"))
                continue
            }
            for name in names where !isHidden(name) {
                let path = current.appending(name)
                switch Entry(path, followingLinks: false) {
                case .directory: pending.append(path)
                case .file: expansion.files.append(path)
                case .missing: continue // removed while the folder was read
                case .other(let reason): expansion.skipped.append(.init(file: path.description, reason: reason))
                }
            }
        }
        return .success(())
    }

    /// A folder that cannot be listed: `strerror` of the failure.
    struct FolderError: Error {
        var message: String
    }

    /// The names in `directory` (bytes, `.` and `..` left out).
    static func entries(of directory: InputPath) -> Result<[[UInt8]], FolderError> {
        guard let stream = directory.withCString({ opendir($0) }) else {
            return .failure(FolderError(message: String(cString: strerror(errno))))
        }
        defer { closedir(stream) }
        var names: [[UInt8]] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: &entry.pointee.d_name) { raw in
                Array(raw.prefix { $0 != 0 })
            }
            if name == [UInt8(ascii: ".")] || name == [UInt8(ascii: "."), UInt8(ascii: ".")] { continue }
            names.append(name)
        }
        return .success(names)
    }

    /// Files matching `pattern`; matched folders contribute what is under them.
    static func glob(_ pattern: InputPath) -> Expansion {
        let absolute = pattern.bytes.first == UInt8(ascii: "/")
        let segments = pattern.bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true).map(Array.init)
        var matches: Set<InputPath> = []
        match(segments[...], in: InputPath(absolute ? "/" : "."), into: &matches)
        var expansion = Expansion()
        for path in matches {
            switch Entry(path, followingLinks: true) {
            case .directory:
                if case .failure(let error) = walk(path, into: &expansion) {
                    expansion.skipped.append(.init(file: path.description, reason: "cannot read the folder: \(error.message)"))
                }
            case .file: expansion.files.append(path)
            case .missing: continue
            case .other(let reason): expansion.skipped.append(.init(file: path.description, reason: reason))
            }
        }
        return expansion
    }

    /// Adds to `matches` every path under `directory` that the remaining pattern `segments` match.
    static func match(_ segments: ArraySlice<[UInt8]>, in directory: InputPath, into matches: inout Set<InputPath>) {
        guard let segment = segments.first else { return }
        let rest = segments.dropFirst()
        if segment == Array("**".utf8) {
            // Zero folders, or one more folder and `**` again.
            if rest.isEmpty {
                matches.insert(directory)
                return
            }
            match(rest, in: directory, into: &matches)
            for name in (try? entries(of: directory).get()) ?? [] where !isHidden(name) {
                let path = directory.appending(name)
                if Entry(path, followingLinks: false) == .directory { match(segments, in: path, into: &matches) }
            }
            return
        }
        let candidates: [[UInt8]]
        if isPattern(InputPath(bytes: segment)) {
            let pattern = InputPath(bytes: segment)
            candidates = ((try? entries(of: directory).get()) ?? []).filter { name in
                pattern.withCString { cPattern in
                    InputPath(bytes: name).withCString { fnmatch(cPattern, $0, FNM_PERIOD) == 0 }
                }
            }
        } else {
            candidates = [segment]
        }
        for name in candidates {
            let path = directory.appending(name)
            let entry = Entry(path, followingLinks: true)
            if rest.isEmpty {
                if entry != .missing { matches.insert(path) }
            } else if entry == .directory {
                match(rest, in: path, into: &matches)
            }
        }
    }

    /// What a path is, from `stat(2)` (or `lstat(2)` while walking).
    enum Entry: Equatable {
        case file, directory, missing
        /// Neither a regular file nor a folder: the sentence that says what it is.
        case other(String)

        init(_ path: InputPath, followingLinks: Bool) {
            var info = stat()
            let status = path.withCString { followingLinks ? stat($0, &info) : lstat($0, &info) }
            guard status == 0 else {
                switch errno {
                case ENOENT, ENOTDIR: self = .missing
                case ELOOP: self = .other("not a regular file: a symbolic link loop")
                default: self = .other("cannot be read: \(String(cString: strerror(errno)))")
                }
                return
            }
            switch info.st_mode & S_IFMT {
            case S_IFDIR: self = .directory
            case S_IFREG: self = .file
            case S_IFLNK: self = Self(link: path)
            case S_IFIFO: self = .other("not a regular file: a FIFO (named pipe)")
            case S_IFSOCK: self = .other("not a regular file: a socket")
            case S_IFCHR, S_IFBLK: self = .other("not a regular file: a device")
            default: self = .other("not a regular file")
            }
        }

        /// A link found while walking: followed to a regular file only, so that a walk never cycles.
        private init(link path: InputPath) {
            var target = stat()
            guard path.withCString({ stat($0, &target) }) == 0 else {
                self = errno == ELOOP ? .other("not a regular file: a symbolic link loop")
                                      : .other("a broken symbolic link (its target is missing)")
                return
            }
            switch target.st_mode & S_IFMT {
            case S_IFREG: self = .file
            case S_IFDIR: self = .other("a symbolic link to a folder, not followed: name the folder itself to read it")
            default: self = .other("not a regular file: a symbolic link to a FIFO, socket or device")
            }
        }
    }
}

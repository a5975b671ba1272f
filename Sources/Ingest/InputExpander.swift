import Foundation

/// Turns the inputs a user named (files, folders, glob patterns) into the list of files to read.
///
/// - A file is kept as given, whatever its name (the reader reports an unsupported type as damage, so a
///   mistaken name is visible rather than skipped).
/// - A folder is walked recursively; files with a supported extension (`.ndjson .jsonl .json .gz .tar .tgz
///   .zip`, and gzip of any of them) are kept. Hidden entries (names starting with `.`, such as `.git` or
///   macOS `._*` resource forks) are skipped, as a shell would.
/// - A pattern with `*`, `?` or `[...]` (and `**` for any number of folders) is matched segment by segment
///   with `fnmatch(3)`; matched folders are walked, matched files are kept when supported.
///
/// The result is deterministic: inputs in the order given, each one's files sorted by path (bytewise), a file
/// named twice listed once (first place wins).
public enum InputExpander {
    /// - Throws: ``InputError`` for a path that does not exist or a pattern that matches no readable file.
    public static func expand(_ inputs: [String]) throws(InputError) -> [String] {
        var result: [String] = []
        var seen: Set<String> = []
        for input in inputs {
            for path in try expand(input) where seen.insert(path).inserted {
                result.append(path)
            }
        }
        return result
    }

    static func expand(_ input: String) throws(InputError) -> [String] {
        switch FileKind(path: input) {
        case .file:
            return [input]
        case .directory:
            return sorted(walk(input))
        case .missing where isPattern(input):
            let files = sorted(glob(input))
            guard !files.isEmpty else { throw InputError(input: input, reason: "the pattern matches no readable file") }
            return files
        case .missing:
            throw InputError(input: input, reason: "no such file or directory")
        }
    }

    /// Whether `text` has glob metacharacters.
    static func isPattern(_ text: String) -> Bool {
        text.contains { $0 == "*" || $0 == "?" || $0 == "[" }
    }

    static func isSupported(_ path: String) -> Bool {
        ContainerKind(name: path) != nil
    }

    static func sorted(_ paths: [String]) -> [String] {
        paths.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    static func join(_ directory: String, _ name: String) -> String {
        if directory == "." { return name }
        return directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// Supported files under `directory`, at any depth. Symbolic links to folders are not followed (no cycles).
    static func walk(_ directory: String) -> [String] {
        var files: [String] = []
        var pending = [directory]
        while let current = pending.popLast() {
            for name in entries(of: current) where !name.hasPrefix(".") {
                let path = join(current, name)
                switch FileKind(path: path, followingLinks: false) {
                case .directory: pending.append(path)
                case .file where isSupported(path): files.append(path)
                default: continue
                }
            }
        }
        return files
    }

    static func entries(of directory: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    }

    /// Files matching `pattern`; matched folders contribute the supported files under them.
    static func glob(_ pattern: String) -> [String] {
        let absolute = pattern.hasPrefix("/")
        let segments = pattern.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        var matches: Set<String> = []
        match(segments[...], in: absolute ? "/" : ".", into: &matches)
        var files: [String] = []
        for path in matches {
            switch FileKind(path: path) {
            case .directory: files.append(contentsOf: walk(path))
            case .file where isSupported(path): files.append(path)
            default: continue
            }
        }
        return Array(Set(files))
    }

    /// Adds to `matches` every path under `directory` that the remaining pattern `segments` match.
    static func match(_ segments: ArraySlice<String>, in directory: String, into matches: inout Set<String>) {
        guard let segment = segments.first else { return }
        let rest = segments.dropFirst()
        if segment == "**" {
            // Zero folders, or one more folder and `**` again.
            if rest.isEmpty {
                matches.insert(directory)
                return
            }
            match(rest, in: directory, into: &matches)
            for name in entries(of: directory) where !name.hasPrefix(".") {
                let path = join(directory, name)
                if FileKind(path: path, followingLinks: false) == .directory { match(segments, in: path, into: &matches) }
            }
            return
        }
        let candidates: [String]
        if isPattern(segment) {
            candidates = entries(of: directory).filter { fnmatch(segment, $0, FNM_PERIOD) == 0 }
        } else {
            candidates = [segment]
        }
        for name in candidates {
            let path = join(directory, name)
            let kind = FileKind(path: path)
            if rest.isEmpty {
                if kind != .missing { matches.insert(path) }
            } else if kind == .directory {
                match(rest, in: path, into: &matches)
            }
        }
    }

    enum FileKind: Equatable {
        case file, directory, missing

        init(path: String, followingLinks: Bool = true) {
            var info = stat()
            let status = followingLinks ? stat(path, &info) : lstat(path, &info)
            guard status == 0 else {
                self = .missing
                return
            }
            switch info.st_mode & S_IFMT {
            case S_IFDIR: self = .directory
            case S_IFREG: self = .file
            case S_IFLNK:
                // A link found while walking: follow it only to a regular file.
                var target = stat()
                self = stat(path, &target) == 0 && target.st_mode & S_IFMT == S_IFREG ? .file : .missing
            default: self = .missing
            }
        }
    }
}

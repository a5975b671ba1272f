import Facts
import Foundation
import Testing
@testable import Ingest

/// Inputs named on the command line: files, folders and globs, always in the same order; whatever is found
/// but cannot be read is said (issue 15.1, 15.3, 18.4, 18.6).
@Suite struct InputExpanderTests {
    /// A tree with JSON, other and hidden files, created in a shuffled order.
    func tree() throws -> TemporaryFolder {
        let folder = try TemporaryFolder()
        for name in ["root/c.tgz", "root/b/2.ndjson", "root/x.txt", "root/a/1.jsonl.gz", "root/.hidden/h.json",
                     "root/._a.json", "root/a.json", "root/b/deep/3.zip", "root/b/deep/4.tar"] {
            try folder.write(name, "{}")
        }
        return folder
    }

    func files(_ inputs: [String]) throws -> [String] {
        try InputExpander.expand(inputs).files.map(\.description)
    }

    /// Every file at any depth, grouped by the first folder below the one named (its own files one group), each
    /// group in path order, the groups spread evenly: the k-th of n files at (2k + 1) / 2n of the way. Here the
    /// top files and b/ have three each (at 1/6, 3/6, 5/6) and a/ one (at 1/2); ties go in the groups' order.
    @Test func foldersAreWalkedRecursivelyAndTheirSubfoldersSpread() throws {
        let folder = try tree()
        let root = folder.path + "/root"
        let expected = ["/a.json", "/b/2.ndjson", "/c.tgz", "/a/1.jsonl.gz", "/b/deep/3.zip", "/x.txt", "/b/deep/4.tar"]
        #expect(try files([root]) == expected.map { root + $0 })
        #expect(try files([root + "/"]) == files([root]))
        #expect(try files([root + "/b"]) == ["/b/deep/3.zip", "/b/2.ndjson", "/b/deep/4.tar"].map { root + $0 })
    }

    /// A folder of App Store notifications by month beside one of daily Play logs: read alternately, each in
    /// date order, so that the signature checks and the ledger's writes run at once.
    @Test func sourcesAreReadAlternatelyEachInItsOwnOrder() throws {
        let folder = try TemporaryFolder()
        let apple = ["2024-01/01.tar.gz", "2024-01/02.tar.gz", "2024-02/01.tar.gz", "2024-02/02.tar.gz"]
        let daily = ["2024-01-01.ndjson.gz", "2024-01-02.ndjson.gz"]
        for name in apple { try folder.write("in/apple/" + name, "{}") }
        for name in daily { try folder.write("in/daily/" + name, "{}") }
        try folder.write("in/backend.jsonl", "{}")
        let order = try files([folder.path + "/in"]).map { String($0.dropFirst(folder.path.count + 4)) }
        // apple/ at 1/8, 3/8, 5/8, 7/8; daily/ at 1/4, 3/4; the top file at 1/2.
        #expect(order == ["apple/2024-01/01.tar.gz", "daily/2024-01-01.ndjson.gz", "apple/2024-01/02.tar.gz", "backend.jsonl",
                          "apple/2024-02/01.tar.gz", "daily/2024-01-02.ndjson.gz", "apple/2024-02/02.tar.gz"])
    }

    @Test func filesAreKeptAsGivenAndListedOnce() throws {
        let folder = try tree()
        let root = folder.path + "/root"
        let first = ["/x.txt", "/c.tgz", "/b/deep/3.zip", "/b/2.ndjson", "/b/deep/4.tar"].map { root + $0 }
        #expect(try files([root + "/x.txt", root + "/c.tgz", root + "/b"]) == first)
        let second = ["/b/2.ndjson", "/b/deep/3.zip", "/b/deep/4.tar"].map { root + $0 }
        #expect(try files([root + "/b/2.ndjson", root + "/b"]) == second)
    }

    @Test func globsAreExpandedAndSorted() throws {
        let folder = try tree()
        let root = folder.path + "/root"
        #expect(try files([root + "/*.json"]) == [root + "/a.json"])
        #expect(try files([root + "/?/*.ndjson"]) == [root + "/b/2.ndjson"])
        let bracket = ["/a/1.jsonl.gz", "/b/2.ndjson", "/b/deep/3.zip", "/b/deep/4.tar"].map { root + $0 }
        #expect(try files([root + "/[ab]/*"]) == bracket)
        #expect(try files([root + "/**/*.tar"]) == [root + "/b/deep/4.tar"])
        #expect(try files([root + "/**/2.ndjson"]) == [root + "/b/2.ndjson"])
        // A folder a pattern matches is walked; a pattern's files are in path order.
        #expect(try files([folder.path + "/r*t"]) == files([root]).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        // Hidden files match only a pattern that names the dot.
        #expect(try files([root + "/*"]).contains(root + "/._a.json") == false)
        #expect(try files([root + "/*.txt"]) == [root + "/x.txt"])
    }

    @Test func aMissingPathIsAnError() throws {
        let folder = try TemporaryFolder()
        let missing = folder.path + "/nope.ndjson"
        #expect(throws: InputError(input: missing, reason: "no such file or directory")) {
            try InputExpander.expand([missing])
        }
    }

    /// Issue 15.3: "An empty folder, or a glob that matches nothing: exit 0 "0 files". That is almost always a
    /// typo in a nightly job: exit 2 with the path."
    @Test func aGlobMatchingNothingIsAnError() throws {
        let folder = try tree()
        let pattern = folder.path + "/root/*.parquet"
        #expect(throws: InputError(input: pattern, reason: "the pattern matches no file")) {
            try InputExpander.expand([pattern])
        }
    }

    @Test func anEmptyFolderIsAnError() throws {
        let folder = try TemporaryFolder()
        #expect(throws: InputError(input: folder.path, reason: "the folder holds no files (hidden files are not inputs)")) {
            try InputExpander.expand([folder.path])
        }
        // Only hidden files, and empty sub-folders: nothing to read either.
        try folder.write(".DS_Store", "x")
        try FileManager.default.createDirectory(atPath: folder.path + "/empty/deeper", withIntermediateDirectories: true)
        #expect(throws: InputError.self) { try InputExpander.expand([folder.path]) }
        let pattern = folder.path + "/empt*"
        #expect(throws: InputError(input: pattern, reason: "the pattern matches no file")) {
            try InputExpander.expand([pattern])
        }
    }

    /// Issue 18.6: FIFOs, sockets and symbolic link loops are "not a regular file" when named directly (a usage
    /// error: opening a FIFO would wait forever) and listed in `skipped_files` when found in a folder.
    @Test func specialFilesAreSaidNeverOpened() throws {
        let folder = try TemporaryFolder()
        try folder.write("in/ok.ndjson", "{}\n")
        let fifo = folder.path + "/in/pipe.ndjson"
        #expect(mkfifo(fifo, 0o600) == 0)
        let loop = folder.path + "/in/loop.json"
        try FileManager.default.createSymbolicLink(atPath: loop, withDestinationPath: loop)
        let broken = folder.path + "/in/broken.json"
        try FileManager.default.createSymbolicLink(atPath: broken, withDestinationPath: folder.path + "/missing.json")
        let linkedFolder = folder.path + "/in/linked"
        try FileManager.default.createSymbolicLink(atPath: linkedFolder, withDestinationPath: folder.path + "/in")
        let linkedFile = folder.path + "/in/alias.ndjson"
        try FileManager.default.createSymbolicLink(atPath: linkedFile, withDestinationPath: folder.path + "/in/ok.ndjson")

        let expansion = try InputExpander.expand([folder.path + "/in"])
        #expect(expansion.files.map(\.description) == [linkedFile, folder.path + "/in/ok.ndjson"])
        #expect(expansion.skipped == [
            .init(file: broken, reason: "a broken symbolic link (its target is missing)"),
            .init(file: linkedFolder, reason: "a symbolic link to a folder, not followed: name the folder itself to read it"),
            .init(file: loop, reason: "not a regular file: a symbolic link loop"),
            .init(file: fifo, reason: "not a regular file: a FIFO (named pipe)"),
        ])
        #expect(throws: InputError(input: fifo, reason: "not a regular file: a FIFO (named pipe)")) {
            try InputExpander.expand([fifo])
        }
        #expect(throws: InputError(input: loop, reason: "not a regular file: a symbolic link loop")) {
            try InputExpander.expand([loop])
        }
    }

    /// Issue 18.4: "Files whose names are not valid UTF-8 are skipped in folders with no word (named directly:
    /// "no such file"): handle paths as bytes." A Latin-1 `café` is `caf\xE9`.
    @Test func namesThatAreNotUTF8AreFilesLikeAnyOther() throws {
        let folder = try TemporaryFolder()
        try folder.write("in/plain.ndjson", "{}\n")
        let latin1 = InputPath(bytes: Array((folder.path + "/in/caf").utf8) + [0xE9] + Array(".ndjson".utf8))
        let descriptor = latin1.withCString { open($0, O_CREAT | O_WRONLY, 0o600) }
        #expect(descriptor >= 0)
        close(descriptor)

        let expansion = try InputExpander.expand([folder.path + "/in"])
        #expect(expansion.files == [latin1, InputPath(folder.path + "/in/plain.ndjson")])
        #expect(expansion.files.first?.description == folder.path + "/in/caf\\xE9.ndjson")
        #expect(try InputExpander.expand([latin1]).files == [latin1])
        let pattern = InputPath(bytes: Array((folder.path + "/in/caf").utf8) + [0xE9] + Array(".*".utf8))
        #expect(try InputExpander.expand([pattern]).files == [latin1])
    }

    /// A path's folder, by its bytes: `.` for a bare name (one letter too), `/` for the root's children.
    @Test func aPathsFolder() {
        let folders = ["l", "ab", "./l", "/l", "a/b/c", "a/b/", "/", "a//b"].map { InputPath($0).folder.description }
        #expect(folders == [".", ".", ".", "/", "a/b", "a", "/", "a/"])
    }
}

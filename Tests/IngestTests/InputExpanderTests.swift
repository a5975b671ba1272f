import Testing
@testable import Ingest

/// Inputs named on the command line: files, folders and globs, always in the same order.
@Suite struct InputExpanderTests {
    /// A tree with supported, unsupported and hidden files, created in a shuffled order.
    func tree() throws -> TemporaryFolder {
        let folder = try TemporaryFolder()
        for name in ["root/c.tgz", "root/b/2.ndjson", "root/x.txt", "root/a/1.jsonl.gz", "root/.hidden/h.json",
                     "root/._a.json", "root/a.json", "root/b/deep/3.zip", "root/b/deep/4.tar"] {
            try folder.write(name, "{}")
        }
        return folder
    }

    @Test func foldersAreWalkedRecursivelyInPathOrder() throws {
        let folder = try tree()
        let root = folder.path + "/root"
        #expect(try InputExpander.expand([root]) == [
            root + "/a.json", root + "/a/1.jsonl.gz", root + "/b/2.ndjson", root + "/b/deep/3.zip",
            root + "/b/deep/4.tar", root + "/c.tgz",
        ])
        #expect(try InputExpander.expand([root + "/"]) == InputExpander.expand([root]))
    }

    @Test func filesAreKeptAsGivenAndListedOnce() throws {
        let folder = try tree()
        let root = folder.path + "/root"
        #expect(try InputExpander.expand([root + "/x.txt", root + "/c.tgz", root + "/b"]) == [
            root + "/x.txt", root + "/c.tgz", root + "/b/2.ndjson", root + "/b/deep/3.zip", root + "/b/deep/4.tar",
        ])
        #expect(try InputExpander.expand([root + "/b/2.ndjson", root + "/b"]) == [
            root + "/b/2.ndjson", root + "/b/deep/3.zip", root + "/b/deep/4.tar",
        ])
    }

    @Test func globsAreExpandedAndSorted() throws {
        let folder = try tree()
        let root = folder.path + "/root"
        #expect(try InputExpander.expand([root + "/*.json"]) == [root + "/a.json"])
        #expect(try InputExpander.expand([root + "/?/*.ndjson"]) == [root + "/b/2.ndjson"])
        #expect(try InputExpander.expand([root + "/[ab]/*"]) == [root + "/a/1.jsonl.gz", root + "/b/2.ndjson", root + "/b/deep/3.zip", root + "/b/deep/4.tar"])
        #expect(try InputExpander.expand([root + "/**/*.tar"]) == [root + "/b/deep/4.tar"])
        #expect(try InputExpander.expand([root + "/**/2.ndjson"]) == [root + "/b/2.ndjson"])
        #expect(try InputExpander.expand([folder.path + "/r*t"]) == InputExpander.expand([root]))
        #expect(try InputExpander.expand([root + "/*"]).contains(root + "/x.txt") == false)
    }

    @Test func aMissingPathIsAnError() throws {
        let folder = try TemporaryFolder()
        let missing = folder.path + "/nope.ndjson"
        #expect(throws: InputError(input: missing, reason: "no such file or directory")) {
            try InputExpander.expand([missing])
        }
    }

    @Test func aGlobMatchingNothingIsAnError() throws {
        let folder = try tree()
        let pattern = folder.path + "/root/*.parquet"
        #expect(throws: InputError(input: pattern, reason: "the pattern matches no readable file")) {
            try InputExpander.expand([pattern])
        }
        let onlyUnsupported = folder.path + "/root/*.txt"
        #expect(throws: InputError.self) { try InputExpander.expand([onlyUnsupported]) }
    }

    @Test func anEmptyFolderGivesNoFiles() throws {
        let folder = try TemporaryFolder()
        #expect(try InputExpander.expand([folder.path]) == [])
    }
}

import Testing
@testable import Ingest

/// The container kind comes from the name alone (case-insensitive).
@Suite struct ContainerKindTests {
    @Test(arguments: [
        ("a.ndjson", ContainerKind.lines), ("a.JSONL", .lines), ("a.json", .json), ("a.tar", .tar), ("a.zip", .zip),
        ("a.ndjson.gz", .gzip(.lines)), ("a.jsonl.gz", .gzip(.lines)), ("a.json.gz", .gzip(.json)),
        ("a.tar.gz", .gzip(.tar)), ("a.TGZ", .gzip(.tar)), ("a.zip.gz", .gzip(.zip)), ("rtdn-2024-03-01.gz", .gzip(.lines)),
    ])
    func kindFromName(name: String, kind: ContainerKind) {
        #expect(ContainerKind(name: name) == kind)
    }

    @Test(arguments: ["a.csv", "a.txt", "a", "a.json.bak", "a.gz.gz", "a.tar.bz2"])
    func unsupportedNames(name: String) {
        #expect(ContainerKind(name: name) == nil)
    }
}

import Testing
@testable import Ingest

/// `inputs.md`: "A file is recognised by its content (gzip, zip and tar magic, JSON's first byte), not by its
/// name". The name only chooses between the two JSON layouts.
@Suite struct ContainerKindTests {
    static let tar = TarBuilder.archive([.file("x.ndjson", Array("{}\n".utf8))])

    @Test(arguments: [
        // Magic numbers win over any name.
        ([0x1F, 0x8B, 0x08, 0x00], "export.txt", ContainerKind.gzip),
        ([0x1F, 0x8B, 0x08, 0x00], "events.ndjson", .gzip),
        (Array("PK\u{03}\u{04}rest".utf8), "backup.dat", .zip),
        (Array("PK\u{05}\u{06}".utf8) + [UInt8](repeating: 0, count: 18), "empty.zip", .zip),
        (tar, "events.json", .tar),
        (tar, "noname", .tar),
        // An empty archive (`tar cf e.tar -T /dev/null`: ten zero blocks) is a tar of nothing, not garbage.
        ([UInt8](repeating: 0, count: 10_240), "2024-03-01.tar", .tar),
        ([UInt8](repeating: 0, count: 4_096), "noname", .tar),
        // JSON text: the name's layout, else `[` is an array and anything else a record per line.
        (Array(#"{"a":1}"#.utf8), "one.json", .json),
        (Array(#"[{"a":1}]"#.utf8), "lines.ndjson", .lines),
        (Array(#"[{"a":1}]"#.utf8), "export.txt", .json),
        (Array("\u{FEFF}  \n[{}]".utf8), "export", .json),
        (Array(#"{"a":1}"#.utf8 + [0x0A]), "server.log", .lines),
        (Array(#""eyJhbGciOiJFUzI1NiJ9.e30.c2ln""#.utf8), "jws.txt", .lines),
        (Array("eyJhbGciOiJFUzI1NiJ9.e30.c2ln\n".utf8), "jws.log", .lines),
        // A garbage first line (a proxy's error page) before the records.
        (Array("<html>502 Bad Gateway</html>\n{\"a\":1}\n".utf8), "shipper.log", .lines),
        (Array("garbage".utf8), "named.jsonl", .lines),
        ([], "empty.ndjson", .lines),
    ] as [([UInt8], String, ContainerKind)])
    func recognisedByContent(head: [UInt8], name: String, kind: ContainerKind) {
        #expect(ContainerKind.recognise(head: head, name: name) == .success(kind))
    }

    @Test(arguments: [
        (Array("platform,product_id\napple,x\n".utf8), "prices.csv", "not JSON, gzip, tar or zip (it starts with the bytes 70 6C 61 74 66 6F 72 6D)"),
        (Array("BZh91AY&SY".utf8), "events.json.bz2", "not JSON, gzip, tar or zip: bzip2-compressed: decompress it, or recompress it with gzip"),
        ([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00, 0x00], "events.xz", "not JSON, gzip, tar or zip: xz-compressed: decompress it, or recompress it with gzip"),
        (Array("SQLite format 3\u{0}".utf8), "copy.db", "not JSON, gzip, tar or zip: an SQLite database"),
        ([], "notes.txt", "an empty file"),
        // ECMA-376 puts [Content_Types].xml first in an Office document; OpenDocument puts `mimetype` first.
        (Array("PK\u{03}\u{04}".utf8) + [UInt8](repeating: 0, count: 22) + [19, 0, 0, 0] + Array("[Content_Types].xml".utf8),
         "revenue.xlsx", "not an archive of records: an Office document (xlsx, docx, pptx)"),
        (Array("PK\u{03}\u{04}".utf8) + [UInt8](repeating: 0, count: 22) + [8, 0, 0, 0] + Array("mimetype".utf8),
         "notes.ods", "not an archive of records: an OpenDocument or EPUB file"),
    ] as [([UInt8], String, String)])
    func otherContentIsNotAnInput(head: [UInt8], name: String, reason: String) {
        #expect(ContainerKind.recognise(head: head, name: name) == .failure(ContainerKind.NotAnInput(reason: reason)))
    }

    @Test func innerNamesOfGzip() {
        #expect(ArchiveReader.innerName(of: "a.ndjson.gz") == "a.ndjson")
        #expect(ArchiveReader.innerName(of: "a.TGZ") == "a.tar")
        #expect(ArchiveReader.innerName(of: "rtdn-2024-03-01.gz") == "rtdn-2024-03-01")
        #expect(ArchiveReader.innerName(of: "plain") == "plain")
    }
}

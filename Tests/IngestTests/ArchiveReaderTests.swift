import Foundation
import Testing
@testable import Ingest

/// Containers (`inputs.md`, "Containers"): every kind, members of every kind, and damage that keeps what came before.
@Suite struct ArchiveReaderTests {
    static let lines = [
        #"{"received_at":"2024-03-01T12:00:00Z","source":"google.rtdn","body":{"version":"1.0","packageName":"com.example.app","eventTimeMillis":"1709294400000","subscriptionNotification":{"version":"1.0","notificationType":4,"purchaseToken":"tok-1","subscriptionId":"premium_monthly"}}}"#,
        #"{"notification_type":"DID_RENEW","environment":"PROD","auto_renew_status":"true","unified_receipt":{"status":0}}"#,
        #"{"kind":"androidpublisher#subscriptionPurchase","startTimeMillis":"1709294400000","expiryTimeMillis":"1711972800000","paymentState":1}"#,
    ]

    static var ndjson: String { lines.joined(separator: "\n") + "\n" }

    @Test func ndjsonYieldsOneRecordPerLineWithLineNumbers() throws {
        let folder = try TemporaryFolder()
        let lines = Self.lines
        let text = lines[0] + "\r\n\n   \n" + lines[1] + "\r\nnot json at all\n" + lines[2]
        let path = try folder.write("events.ndjson", text)
        let result = try readAll(path)
        #expect(result.damages.isEmpty)
        #expect(result.texts == [lines[0], lines[1], "not json at all", lines[2]])
        #expect(result.positions == [1, 4, 5, 6])
        #expect(result.members == [nil, nil, nil, nil])
        #expect(result.records.allSatisfy { $0.provenance.file == path })
    }

    @Test func jsonlIsLines() throws {
        let folder = try TemporaryFolder()
        let result = try readAll(try folder.write("events.JSONL", "\u{FEFF}" + Self.ndjson))
        #expect(result.texts == Self.lines)
        #expect(result.positions == [1, 2, 3])
    }

    @Test func linesAcrossManyChunksStayWhole() throws {
        let folder = try TemporaryFolder()
        // ~700 KiB: lines straddle the 256 KiB read chunks.
        let records = (0..<5000).map { #"{"kind":"androidpublisher#subscriptionPurchase","orderId":"GPA.3372-\#($0)","startTimeMillis":"1709294400000","expiryTimeMillis":"1711972800000"}"# }
        let result = try readAll(try folder.write("big.ndjson", records.joined(separator: "\n")))
        #expect(result.texts == records)
        #expect(result.positions.last == 5000)
    }

    @Test func overlongLineIsCutSoItIsQuarantined() throws {
        let folder = try TemporaryFolder()
        let long = #"{"a":""# + String(repeating: "x", count: 300) + #""}"#
        let path = try folder.write("long.ndjson", long + "\n" + Self.lines[1] + "\n")
        let result = try readAll(path, reader: ArchiveReader(maximumRecordBytes: 150))
        #expect(result.records.count == 2)
        #expect(result.records[0].bytes.count == 150)
        #expect(result.texts[1] == Self.lines[1])
        #expect(result.positions == [1, 2])
        guard case .failure(let rejection) = RecordParser(times: testTimes).parse(result.records[0]) else {
            Issue.record("a cut line must not parse")
            return
        }
        #expect(rejection.reason == .malformedJSON)
    }

    /// A pretty-printed record among compact lines (as `json.dumps(record, indent=2)` logs one) is one record at
    /// the line that opened it, not one malformed record per line. Lines no document could continue end it: a
    /// line cut short before the next record, and a document cut off by the end of the file, are records line
    /// by line as before, so no record after them is swallowed.
    @Test func aPrettyPrintedRecordAmongLinesIsOneRecord() throws {
        let folder = try TemporaryFolder()
        let pretty = """
            {
              "kind": "androidpublisher#subscriptionPurchase",
              "startTimeMillis": "1709294400000",

              "expiryTimeMillis": "1711972800000",
              "nested": {"list": ["}", "{", 1]}
            }
            """
        let cut = #"{"notification_type":"DID_RENEW","unified_receipt":{"status":"#
        let text = Self.lines[0] + "\n" + pretty + "\n" + cut + "\n" + Self.lines[1] + "\n{\n  \"truncated\": ["
        let result = try readAll(try folder.write("mixed.ndjson", text))
        #expect(result.damages.isEmpty)
        #expect(result.positions == [1, 2, 9, 10, 11, 12])
        // Blank lines inside it are left out, as everywhere in a file of lines.
        let read = pretty.replacingOccurrences(of: "\n\n", with: "\n")
        #expect(result.texts == [Self.lines[0], read, cut, Self.lines[1], "{", "  \"truncated\": ["])
        let parser = RecordParser(times: testTimes)
        guard case .success(let parsed) = parser.parse(result.records[1]) else {
            Issue.record("the pretty record must parse as one")
            return
        }
        #expect(parsed.source == .googleSubscriptionV1)

        // A line cut short, then records indented by a space or a tab: every record is its own again. (A file
        // that starts with the cut line is read as one document, which ContainerKind decides.)
        let indented = [Self.lines[1], cut, " " + Self.lines[0], "\t" + Self.lines[2], " " + Self.lines[1]]
        let recovered = try readAll(try folder.write("indented.ndjson", indented.joined(separator: "\n") + "\n"))
        #expect(recovered.texts == indented, "\(recovered.texts)")
        #expect(recovered.positions == [1, 2, 3, 4, 5])

        // Printed with no indentation (`json.dumps(indent=0)`): objects inside it start at the first column. It is
        // an array: its elements are the records, at the line it opens on.
        let elements = ["{\n\"kind\": \"androidpublisher#voidedPurchase\",\n\"orderId\": \"GPA.1\"\n}", "{\n\"orderId\": \"GPA.2\"\n}"]
        let flat = "[\n" + elements.joined(separator: ",\n") + "\n]"
        let unindented = try readAll(try folder.write("flat.ndjson", Self.lines[0] + "\n" + flat + "\n" + Self.lines[2] + "\n"))
        #expect(unindented.texts == [Self.lines[0]] + elements + [Self.lines[2]] && unindented.positions == [1, 2, 2, 11])
    }

    /// A logger that writes a batch of records as a JSON array on one line: each element is a record (at that
    /// line), as in a `.json` file's array, not one unrecognized record holding them all. Where the array breaks,
    /// the rest is one malformed record; an array cut short stays one record, quarantined whole.
    @Test func aJSONArrayOnALineIsABatchOfRecords() throws {
        let folder = try TemporaryFolder()
        let batch = "[" + Self.lines[1] + ", " + Self.lines[2] + "]"
        let broken = "[" + Self.lines[2] + " oops]"
        let cut = "[" + Self.lines[1] + ", {\"kind\":"
        let text = Self.lines[0] + "\n" + batch + "\n[]\n" + broken + "\n" + cut + "\n" + Self.lines[0] + "\n"
        let result = try readAll(try folder.write("batches.ndjson", text))
        #expect(result.damages.isEmpty)
        #expect(result.texts == [Self.lines[0], Self.lines[1], Self.lines[2], Self.lines[2], "oops]", cut, Self.lines[0]],
                "\(result.texts)")
        #expect(result.positions == [1, 2, 2, 4, 4, 5, 6])
        let parser = RecordParser(times: testTimes)
        let sources = result.records.map { record -> String? in
            if case .success(let parsed) = parser.parse(record) { return parsed.source.rawValue } else { return nil }
        }
        #expect(sources == ["google.rtdn", "apple.notification.v1", "google.subscription.v1", "google.subscription.v1", nil, nil,
                            "google.rtdn"], "\(sources)")

        // Batches one per line under any name: the content decides, so `.json` and a name with no extension read
        // every element of every line too (as one document of arrays one after another, numbered in order).
        let batches = "[" + Self.lines[0] + "," + Self.lines[1] + "]\n[" + Self.lines[2] + "]\n[" + Self.lines[1] + "]\n"
        for name in ["batches.json", "batches"] {
            let read = try readAll(try folder.write(name, batches))
            #expect(read.texts == [Self.lines[0], Self.lines[1], Self.lines[2], Self.lines[1]] && read.damages.isEmpty, "\(name): \(read.texts)")
            #expect(read.positions == [0, 1, 2, 3], "\(name)")
        }
    }

    @Test func jsonSingleRecordIsPositionZero() throws {
        let folder = try TemporaryFolder()
        let pretty = "{\n  \"signedPayload\": \"eyJhbGciOiJFUzI1NiJ9.eyJhIjoxfQ.c2ln\"\n}\n"
        let result = try readAll(try folder.write("one.json", pretty))
        #expect(result.damages.isEmpty)
        #expect(result.texts == ["{\n  \"signedPayload\": \"eyJhbGciOiJFUzI1NiJ9.eyJhIjoxfQ.c2ln\"\n}"])
        #expect(result.positions == [0])
    }

    /// The layout is the content's, not the name's (inputs.md: "recognised by its content ... not by its name"):
    /// NDJSON saved as `.json` is a record per line; pretty-printed documents under any other name (`.ndjson`,
    /// `.txt`, a tar member with no extension) are one record each, one after another.
    @Test func theLayoutFollowsTheContentWhateverTheName() throws {
        let folder = try TemporaryFolder()
        let lines = try readAll(try folder.write("events.json", Self.ndjson))
        #expect(lines.texts == Self.lines && lines.positions == [1, 2, 3] && lines.damages.isEmpty)

        let first = "{\n  \"signedPayload\": \"eyJhbGciOiJFUzI1NiJ9.eyJhIjoxfQ.c2ln\"\n}"
        let second = "{\n  \"notification_type\": \"DID_RENEW\",\n  \"unified_receipt\": {\"status\": 0}\n}"
        for name in ["notifications.ndjson", "notification.txt", "123"] {
            let documents = try readAll(try folder.write(name, first + "\n" + second + "\n"))
            #expect(documents.texts == [first, second], "\(name)")
            #expect(documents.positions == [0, 1] && documents.damages.isEmpty, "\(name)")
        }
        // A garbage line among the documents, and a stray closing brace, are a record each (quarantined whole),
        // not a record per word, and the documents after them are read.
        let garbage = "this is not json, at all"
        let mixed = try readAll(try folder.write("mixed.txt", first + "\n" + garbage + "\r\n" + second + "}\n" + first + "\n42 true\n"))
        #expect(mixed.texts == [first, garbage, second, "}", first, "42 true"] && mixed.damages.isEmpty, "\(mixed.texts)")
        #expect(mixed.positions == [0, 1, 2, 3, 4, 5])
        // Such a run ends where a value starts on its line, so no record after garbage on one line is swallowed;
        // a line ending in a lone carriage return ends it too.
        let sameLine = try readAll(try folder.write("same-line.txt", first + "\nx " + Self.lines[1] + "\r1 " + Self.lines[2] + "\n"))
        #expect(sameLine.texts == [first, "x", Self.lines[1], "1", Self.lines[2]] && sameLine.damages.isEmpty, "\(sameLine.texts)")
        // A document cut off inside its value is damage; the one before it is read.
        let cut = try readAll(try folder.write("cut.txt", first + "\n{\n  \"notification_type\": \"DID_"))
        #expect(cut.texts == [first] && cut.damages.count == 1)
    }

    @Test func jsonArrayIsStreamedElementByElement() throws {
        let folder = try TemporaryFolder()
        let elements = [
            #"{"body":"{\"a\":\"]}\\\"[{\"}","source":"google.rtdn"}"#,
            #"{"nested":[{"x":[1,2,{"y":"}"}]}]}"#,
            #""eyJhbGciOiJFUzI1NiJ9.eyJ0cmFuc2FjdGlvbklkIjoiMSJ9.c2ln""#,
            "42",
            "null",
        ]
        let text = "\u{FEFF}[\n  " + elements.joined(separator: " ,\n  ") + "\n]\n"
        let result = try readAll(try folder.write("array.json", text))
        #expect(result.damages.isEmpty)
        #expect(result.texts == elements)
        #expect(result.positions == [0, 1, 2, 3, 4])
    }

    @Test func largeJSONArrayAcrossChunks() throws {
        let folder = try TemporaryFolder()
        let elements = (0..<4000).map { #"{"kind":"androidpublisher#productPurchase","orderId":"GPA.1-\#($0)","note":"a \"quoted\" ] and } inside"}"# }
        let result = try readAll(try folder.write("big.json", "[" + elements.joined(separator: ",") + "]"))
        #expect(result.damages.isEmpty)
        #expect(result.texts == elements)
        #expect(result.positions.last == 3999)
    }

    /// A single document is followed through its strings with memchr: an escaped quote or a brace inside a long
    /// string must not end it, and a document cut inside a string is damage, not a record.
    @Test func singleDocumentWithLongEscapedStringsIsOneRecordAndACutOneIsDamage() throws {
        let folder = try TemporaryFolder()
        let long = String(repeating: "eyJhbGciOiJFUzI1NiJ9", count: 4000)
        // Escapes spread over more than the splitter's search window (JSONDocumentSplitter.stringWindow).
        let trace = String(repeating: #"at frame\n\t{\"x\": [1]} "#, count: 1000)
        let document = #"{"signedPayload":"\#(long)","trace":"\#(trace)","note":"a \"quoted\" } and \\ ] inside"}"#
        #expect((try? JSONParser.parse(Array(document.utf8))) != nil)
        let whole = try readAll(try folder.write("one.json", document + "\n"))
        #expect(whole.damages.isEmpty)
        #expect(whole.texts == [document])
        let array = try readAll(try folder.write("array.json", #"[{"a":1},\#(document),{"b":"\\"}]"#))
        #expect(array.damages.isEmpty)
        #expect(array.texts == [#"{"a":1}"#, document, #"{"b":"\\"}"#])
        let cut = try readAll(try folder.write("cut.json", String(document.prefix(document.utf8.count - 20))))
        #expect(cut.texts.isEmpty)
        #expect(cut.damages.map(\.reason) == ["JSON document cut off inside a value"])
    }

    @Test func brokenJSONArrayYieldsCompleteElementsThenTheRestAsOneRecord() throws {
        let folder = try TemporaryFolder()
        let text = #"[{"a":1}, {"b":2} oops {"c":3}]"#
        let result = try readAll(try folder.write("broken.json", text))
        #expect(result.damages.isEmpty)
        #expect(result.texts == [#"{"a":1}"#, #"{"b":2}"#, #"oops {"c":3}]"#])
        #expect(result.positions == [0, 1, 2])
        guard case .failure(let rejection) = RecordParser(times: testTimes).parse(result.records[2]) else {
            Issue.record("the broken rest must be quarantined")
            return
        }
        #expect(rejection.reason == .malformedJSON)
    }

    @Test func cutOffJSONArrayIsDamage() throws {
        let folder = try TemporaryFolder()
        let text = #"[{"a":1}, {"b":"x"#
        let result = try readAll(try folder.write("cut.json", text))
        #expect(result.texts == [#"{"a":1}"#])
        #expect(result.damages.count == 1)
        #expect(result.damages.first?.offset == Int64(text.utf8.count))
        #expect(result.damages.first?.reason.contains("cut off") == true)
    }

    @Test func gzipOfNdjsonAndJson() throws {
        let folder = try TemporaryFolder()
        let lines = try readAll(try folder.write("a.ndjson.gz", try GzipWriter.gzip(Self.ndjson)))
        #expect(lines.damages.isEmpty)
        #expect(lines.texts == Self.lines)
        #expect(lines.positions == [1, 2, 3])
        let array = try readAll(try folder.write("b.json.gz", try GzipWriter.gzip("[" + Self.lines.joined(separator: ",") + "]")))
        #expect(array.damages.isEmpty)
        #expect(array.texts == Self.lines)
        #expect(array.positions == [0, 1, 2])
        let bare = try readAll(try folder.write("shipper-2024-03-01.gz", try GzipWriter.gzip(Self.ndjson)))
        #expect(bare.texts == Self.lines)
    }

    @Test func concatenatedGzipMembersAreOneStream() throws {
        let folder = try TemporaryFolder()
        // Log shippers append a member per flush; a line may even straddle two members.
        let first = try GzipWriter.gzip(Self.lines[0] + "\n" + String(Self.lines[1].prefix(20)))
        let second = try GzipWriter.gzip(String(Self.lines[1].dropFirst(20)) + "\n")
        let third = try GzipWriter.gzip(Self.lines[2] + "\n")
        let result = try readAll(try folder.write("multi.ndjson.gz", first + second + third))
        #expect(result.damages.isEmpty)
        #expect(result.texts == Self.lines)
        #expect(result.positions == [1, 2, 3])
    }

    @Test func truncatedGzipKeepsEarlierRecordsAndReportsTheOffset() throws {
        let folder = try TemporaryFolder()
        let records = (0..<20000).map { #"{"kind":"androidpublisher#subscriptionPurchase","orderId":"GPA.\#($0 * 7919 % 10007)-\#($0)","expiryTimeMillis":"\#(1711972800000 + $0)","startTimeMillis":"1709294400000"}"# }
        let gz = try GzipWriter.gzip(records.joined(separator: "\n") + "\n")
        let cut = Array(gz.prefix(gz.count / 2))
        let result = try readAll(try folder.write("cut.ndjson.gz", cut))
        #expect(result.records.count > 1000)
        #expect(result.records.count < records.count)
        #expect(result.texts == Array(records.prefix(result.records.count)))
        #expect(result.damages.count == 1)
        #expect(result.damages.first?.offset == Int64(cut.count))
        #expect(result.damages.first?.reason.contains("cut off") == true)
    }

    @Test func corruptGzipReportsWhereInflatingStopped() throws {
        let folder = try TemporaryFolder()
        var gz = try GzipWriter.gzip(Self.ndjson)
        // Break the deflate block header right after the 10-byte gzip header.
        gz[10] = 0xFF
        gz[11] = 0xFF
        let result = try readAll(try folder.write("bad.ndjson.gz", gz))
        #expect(result.records.isEmpty)
        #expect(result.damages.count == 1)
        #expect((result.damages.first?.offset ?? -1) >= 10)
        #expect((result.damages.first?.offset ?? Int64.max) < Int64(gz.count))
        #expect(result.damages.first?.reason.contains("corrupt gzip") == true)
    }

    @Test func tarMembersOfEveryKind() throws {
        let folder = try TemporaryFolder()
        let longPath = "exports/" + String(repeating: "google-play-subscriptions/", count: 5) + "2024-03.ndjson"
        let gnuPath = "exports/" + String(repeating: "app-store-server-notifications/", count: 4) + "v2.json"
        let tar = TarBuilder.archive([
            .directory("exports/"),
            .file("exports/a.ndjson", Array((Self.lines[0] + "\n").utf8)),
            .file("exports/b.json", Array(("[" + Self.lines[1] + "]").utf8)),
            .file("exports/c.json.gz", try GzipWriter.gzip(Self.lines[2])),
            .file("exports/d.ndjson.gz", try GzipWriter.gzip(Self.lines[0] + "\n" + Self.lines[1] + "\n")),
            .paxFile(path: longPath, Array((Self.lines[2] + "\n").utf8)),
            .gnuLongFile(path: gnuPath, Array(Self.lines[1].utf8)),
            .file("exports/README.txt", Array("hello".utf8)),
        ])
        let path = try folder.write("archive.tar", tar)
        let result = try readAll(path)
        #expect(result.texts == [Self.lines[0], Self.lines[1], Self.lines[2], Self.lines[0], Self.lines[1], Self.lines[2], Self.lines[1]])
        #expect(result.members == ["exports/a.ndjson", "exports/b.json", "exports/c.json.gz", "exports/d.ndjson.gz",
                                   "exports/d.ndjson.gz", longPath, gnuPath])
        #expect(result.positions == [1, 0, 0, 1, 2, 1, 0])
        // Recognised by content: "hello" is none of the inputs (the damage is where its data starts).
        #expect(result.damages == [Damage(file: path, offset: Int64(tar.count - 2048 + 512),
                                          reason: "member exports/README.txt: not an input: not JSON, gzip, tar or zip (it starts with the bytes 68 65 6C 6C 6F)")])
    }

    @Test func gzippedTarsAndGzipInsideGzippedTar() throws {
        let folder = try TemporaryFolder()
        let tar = TarBuilder.archive([
            .file("day1.ndjson", Array(Self.ndjson.utf8)),
            .file("day2.json.gz", try GzipWriter.gzip("[" + Self.lines.joined(separator: ",") + "]")),
        ])
        for name in ["archive.tar.gz", "archive.tgz"] {
            let result = try readAll(try folder.write(name, try GzipWriter.gzip(tar)))
            #expect(result.damages.isEmpty)
            #expect(result.texts == Self.lines + Self.lines)
            #expect(result.members == Array(repeating: "day1.ndjson", count: 3) + Array(repeating: "day2.json.gz", count: 3))
        }
    }

    /// Gzips or tars nested thousands deep (a few hundred kB) held an inflater per level and overflowed the stack:
    /// past ``ArchiveReader/maximumNesting`` they are damage that says so, while a few levels are read.
    @Test func archivesNestedTooDeepAreDamageNotACrash() throws {
        let folder = try TemporaryFolder()
        func gzipped(_ depth: Int) throws -> [UInt8] {
            var bytes = Array(Self.ndjson.utf8)
            for _ in 0..<depth { bytes = try GzipWriter.gzip(bytes) }
            return bytes
        }
        func tarred(_ depth: Int) -> [UInt8] {
            var bytes = Array(Self.ndjson.utf8), name = "day.ndjson"
            for level in 0..<depth {
                bytes = TarBuilder.archive([.file(name, bytes)])
                name = "level\(level).tar"
            }
            return bytes
        }
        let shallow = try readAll(try folder.write("shallow.ndjson.gz", try gzipped(3)))
        #expect(shallow.damages.isEmpty && shallow.texts == Self.lines)
        let deepGzip = try readAll(try folder.write("deep.gz", try gzipped(2_000)))
        let deepTar = try readAll(try folder.write("deep.tar", tarred(2_000)))
        for deep in [deepGzip, deepTar] {
            #expect(deep.records.isEmpty)
            #expect(deep.damages.count == 1 && deep.damages.first?.reason.contains("nested more than 16 deep") == true,
                    "\(deep.damages)")
        }
    }

    /// An empty archive (`tar cf e.tar -T /dev/null`, ten zero blocks), plain or gzipped: a day with nothing to
    /// pack is read as nothing, not skipped as garbage (which made every nightly run exit 1). Zero blocks with
    /// records after them are no empty archive: the records are not dropped without a word, the rest is damage.
    @Test func anEmptyTarIsAnArchiveOfNothing() throws {
        let folder = try TemporaryFolder()
        let empty = [UInt8](repeating: 0, count: 10_240)
        for (name, bytes) in [("empty.tar", empty), ("empty.tgz", try GzipWriter.gzip(empty))] {
            let result = try readAll(try folder.write(name, bytes))
            #expect(result.records.isEmpty && result.damages.isEmpty, "\(name)")
        }
        let zeroedHead = try readAll(try folder.write("zeroed.log", [UInt8](repeating: 0, count: 4_096) + Array(Self.ndjson.utf8)))
        #expect(zeroedHead.records.isEmpty)
        #expect(zeroedHead.damages.map(\.offset) == [4_096])
        #expect(zeroedHead.damages.first?.reason.contains("data after the end-of-archive marker at tar byte 4096") == true)
    }

    @Test func truncatedTarKeepsEarlierMembers() throws {
        let folder = try TemporaryFolder()
        let tar = TarBuilder.archive([
            .file("one.ndjson", Array(Self.ndjson.utf8)),
            .file("two.ndjson", Array(Self.ndjson.utf8)),
        ])
        // Cut inside the second member's data: its complete lines were streamed, the cut line is not yielded.
        let firstMemberBlocks = 512 + ((Self.ndjson.utf8.count + 511) / 512) * 512
        let cutInData = Array(tar.prefix(firstMemberBlocks + 512 + Self.lines[0].utf8.count + 10))
        let inData = try readAll(try folder.write("cut-data.tar", cutInData))
        #expect(inData.texts == Self.lines + [Self.lines[0]])
        #expect(inData.damages.count == 1)
        #expect(inData.damages.first?.offset == Int64(cutInData.count))
        #expect(inData.damages.first?.reason.contains("cut off in member two.ndjson") == true)

        let cutInHeader = Array(tar.prefix(firstMemberBlocks + 100))
        let inHeader = try readAll(try folder.write("cut-header.tar", cutInHeader))
        #expect(inHeader.texts == Self.lines)
        #expect(inHeader.damages.count == 1)
        #expect(inHeader.damages.first?.offset == Int64(cutInHeader.count))
        #expect(inHeader.damages.first?.reason.contains("header at tar byte \(firstMemberBlocks)") == true)
    }

    @Test func corruptTarHeaderStopsWithDamage() throws {
        let folder = try TemporaryFolder()
        var tar = TarBuilder.archive([
            .file("one.ndjson", Array(Self.ndjson.utf8)),
            .file("two.ndjson", Array(Self.ndjson.utf8)),
        ])
        let secondHeader = 512 + ((Self.ndjson.utf8.count + 511) / 512) * 512
        tar[secondHeader + 3] ^= 0x55
        let result = try readAll(try folder.write("bad.tar", tar))
        #expect(result.texts == Self.lines)
        #expect(result.damages.count == 1)
        #expect(result.damages.first?.offset == Int64(secondHeader))
        #expect(result.damages.first?.reason.contains("checksum") == true)
    }

    @Test func damagedMemberInsideTarIsSkippedAndTheRestRead() throws {
        let folder = try TemporaryFolder()
        let gz = try GzipWriter.gzip(Self.ndjson)
        let tar = TarBuilder.archive([
            .file("cut.ndjson.gz", Array(gz.prefix(gz.count - 12))),
            .file("fine.ndjson", Array(Self.ndjson.utf8)),
        ])
        let result = try readAll(try folder.write("mixed.tar", tar))
        #expect(result.members.filter { $0 == "fine.ndjson" }.count == 3)
        #expect(result.damages.count == 1)
        #expect(result.damages.first?.reason.hasPrefix("member cut.ndjson.gz: gzip stream") == true)
    }

    @Test func zipMembersOfEveryKind() throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/export.zip"
        try ZipBuilder.write(path, members: [
            ("2024/03/events.ndjson", Array(Self.ndjson.utf8)),
            ("2024/03/receipts.json.gz", try GzipWriter.gzip("[" + Self.lines[1] + "]")),
            ("2024/03/one.json", Array(Self.lines[2].utf8)),
            ("2024/03/nested.tar", TarBuilder.archive([.file("inner.ndjson", Array((Self.lines[0] + "\n").utf8))])),
            ("notes.md", Array("# notes".utf8)),
        ])
        let result = try readAll(path)
        #expect(result.texts == Self.lines + [Self.lines[1], Self.lines[2], Self.lines[0]])
        #expect(result.members == ["2024/03/events.ndjson", "2024/03/events.ndjson", "2024/03/events.ndjson",
                                   "2024/03/receipts.json.gz", "2024/03/one.json", "2024/03/nested.tar!inner.ndjson"])
        #expect(result.damages.map(\.reason) == ["member notes.md: not an input: not JSON, gzip, tar or zip (it starts with the bytes 23 20 6E 6F 74 65 73)"])
        // The offset is where the member's data starts in the file: after its local header's fixed 30 bytes and
        // its name (the name's first occurrence; the central directory comes last).
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let name = try #require(Self.find(Array("notes.md".utf8), in: bytes, after: 0))
        #expect(result.damages.first?.offset == Int64(name + "notes.md".utf8.count))
    }

    /// An end record that counts fewer entries than its directory holds (a zip of more than 65,535 members
    /// written without zip64 counts them modulo 65,536; here 0 and 1 of 3): every entry to the directory's stated
    /// end is read, as `unzip` reads them. One that counts more than there are is still damage.
    @Test func zipEntriesPastTheEndRecordsCountAreRead() throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/export.zip"
        try ZipBuilder.write(path, members: (0..<3).map { ("day\($0).ndjson", Array((Self.lines[$0] + "\n").utf8)) })
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let record = bytes.count - 22
        #expect(Array(bytes[record..<record + 4]) == [0x50, 0x4B, 0x05, 0x06])
        for (count, expected) in [(0, Self.lines), (1, Self.lines), (3, Self.lines)] {
            var edited = bytes
            for at in [record + 8, record + 10] { edited[at] = UInt8(count); edited[at + 1] = 0 }
            let result = try readAll(try folder.write("edited-\(count).zip", edited))
            #expect(result.texts == expected && result.damages.isEmpty, "count \(count)")
        }
        var overstated = bytes
        for at in [record + 8, record + 10] { overstated[at] = 5; overstated[at + 1] = 0 }
        let result = try readAll(try folder.write("overstated.zip", overstated))
        #expect(result.texts == Self.lines && result.damages.map(\.reason) == ["zip directory damaged at entry 4 of 5"])
    }

    /// A member whose size only its pax header states (how pax writers store one of 8 GiB or more: the ustar
    /// size field 0): read to its pax size, and the member after it too, as GNU tar reads them.
    @Test func aPaxSizeIsTheMembersSize() throws {
        let folder = try TemporaryFolder()
        let data = Array((Self.lines[0] + "\n" + Self.lines[1] + "\n").utf8)
        var tar: [UInt8] = []
        TarBuilder.append(name: "PaxHeaders.0/big", type: UInt8(ascii: "x"), data: Array(TarBuilder.paxRecord("size", "\(data.count)").utf8),
                          to: &tar)
        tar += TarBuilder.header(name: "big.ndjson", size: 0, type: UInt8(ascii: "0"))
        tar += data + [UInt8](repeating: 0, count: (512 - data.count % 512) % 512)
        tar += TarBuilder.archive([.file("after.ndjson", Array((Self.lines[2] + "\n").utf8))])
        let result = try readAll(try folder.write("export.tar", tar))
        #expect(result.texts == Self.lines && result.damages.isEmpty, "\(result.damages)")
        #expect(result.members == ["big.ndjson", "big.ndjson", "after.ndjson"])
    }

    /// Hidden members are not inputs, as hidden files in a folder are: the AppleDouble files macOS puts into the
    /// tars and zips it makes (`._x.ndjson`, `__MACOSX/._x.ndjson`) hold attributes, not records, and are passed
    /// over without a damage or a quarantined line; `./` paths are not hidden.
    @Test func hiddenMembersAreNotInputs() throws {
        let folder = try TemporaryFolder()
        let appleDouble: [UInt8] = [0x00, 0x05, 0x16, 0x07, 0x00, 0x02, 0x00, 0x00] + Array("Mac OS X        ".utf8) + [0x0A, 0x7B, 0x0A]
        let tar = TarBuilder.archive([
            .file("./._day1.ndjson", appleDouble),
            .file("./day1.ndjson", Array((Self.lines[0] + "\n").utf8)),
            .file(".git/config", Array("{\"a\": 1}\n".utf8)),
        ])
        let fromTar = try readAll(try folder.write("export.tar", tar))
        #expect(fromTar.texts == [Self.lines[0]] && fromTar.members == ["./day1.ndjson"] && fromTar.damages.isEmpty)

        let path = folder.path + "/export.zip"
        try ZipBuilder.write(path, members: [
            ("day1.ndjson", Array((Self.lines[1] + "\n").utf8)),
            ("__MACOSX/._day1.ndjson", appleDouble),
        ])
        let fromZip = try readAll(path)
        #expect(fromZip.texts == [Self.lines[1]] && fromZip.damages.isEmpty)
    }

    @Test func zipInsideTarIsReportedAndTheOtherMembersAreRead() throws {
        let folder = try TemporaryFolder()
        let zipPath = folder.path + "/inner.zip"
        try ZipBuilder.write(zipPath, members: [("a.ndjson", Array(Self.ndjson.utf8))])
        let zipBytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: zipPath)))
        let tar = TarBuilder.archive([.file("inner.zip", zipBytes), .file("after.ndjson", Array((Self.lines[0] + "\n").utf8))])
        let path = try folder.write("zips.tar", tar)
        let result = try readAll(path)
        #expect(result.members == ["after.ndjson"])
        #expect(result.texts == [Self.lines[0]])
        #expect(result.damages.count == 1)
        #expect(result.damages.first?.reason.contains("inner.zip: a zip inside another archive is not read") == true)
    }

    @Test func corruptZipMemberIsDamageAndTheOtherMembersAreRead() throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/export.zip"
        let big = (0..<2000).map { #"{"kind":"androidpublisher#productPurchase","orderId":"GPA.\#($0)","purchaseTimeMillis":"\#(1709294400000 + $0 * 7919)"}"# }
        try ZipBuilder.write(path, members: [("a.ndjson", Array(big.joined(separator: "\n").utf8)), ("b.ndjson", Array(Self.ndjson.utf8))])
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        // Inside a.ndjson's deflate data, well past its local header.
        for i in 200..<260 { bytes[i] ^= 0xA5 }
        let result = try readAll(try folder.write("corrupt.zip", bytes))
        #expect(result.records.filter { $0.provenance.member == "b.ndjson" }.map { String(decoding: $0.bytes, as: UTF8.self) } == Self.lines)
        #expect(result.records.filter { $0.provenance.member == "a.ndjson" }.count < big.count)
        #expect(result.damages.count == 1)
        #expect(result.damages.first?.reason.hasPrefix("member a.ndjson: ") == true)
    }

    /// `inputs.md`: "A truncated gzip/tar/zip keeps every record read before the damage and reports the damage
    /// (file, offset, reason)". A cut zip has lost its central directory (at its end): its local headers are
    /// walked from the start instead.
    @Test func truncatedZipKeepsTheMembersBeforeTheCut() throws {
        let folder = try TemporaryFolder()
        let path = folder.path + "/whole.zip"
        try ZipBuilder.write(path, members: [("a.ndjson", Array(Self.ndjson.utf8)), ("b.ndjson", Array(Self.ndjson.utf8))])
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let second = try #require(Self.find(Array("PK\u{03}\u{04}".utf8), in: bytes, after: 4))
        // Cut in the central directory: both members are whole.
        let cutDirectory = try readAll(try folder.write("cut.zip", Array(bytes.prefix(bytes.count - 30))))
        #expect(cutDirectory.texts == Self.lines + Self.lines)
        #expect(cutDirectory.damages.count == 1)
        #expect(cutDirectory.damages.first?.reason == "zip cut off or damaged: its central directory is missing (the 2 members before it were read)")
        // Cut inside the second member's deflate data: the first member is whole, the cut is reported where it is.
        let cutMember = Array(bytes.prefix(second + 60))
        let inMember = try readAll(try folder.write("cut-member.zip", cutMember))
        #expect(inMember.members.filter { $0 == "a.ndjson" }.count == 3)
        #expect(inMember.damages == [Damage(file: folder.path + "/cut-member.zip", offset: Int64(cutMember.count),
                                            reason: "member b.ndjson: deflate stream cut off before its end (truncated)")])
    }

    @Test func contentThatIsNotAnInputIsSaid() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write("notes.csv", "a,b\n")
        #expect(ArchiveReader().recognise(InputPath(path)) == .notAnInput("not JSON, gzip, tar or zip (it starts with the bytes 61 2C 62 0A)"))
        let result = try readAll(path)
        #expect(result.records.isEmpty)
        #expect(result.damages == [Damage(file: path, offset: 0, reason: "not an input: not JSON, gzip, tar or zip (it starts with the bytes 61 2C 62 0A)")])
        // A gzip is looked into: gzip of a CSV is not an input either; gzip of JSON lines under any name is.
        let csv = try folder.write("prices.csv.gz", try GzipWriter.gzip("a,b\n"))
        #expect(ArchiveReader().recognise(InputPath(csv)) == .notAnInput("gzip of something else: not JSON, gzip, tar or zip (it starts with the bytes 61 2C 62 0A)"))
        let log = try folder.write("shipper.log.1", try GzipWriter.gzip(Self.ndjson))
        #expect(ArchiveReader().recognise(InputPath(log)) == .input)
        #expect(try readAll(log).texts == Self.lines)
    }

    /// Issue 18.3: "A small zip hangs ingest forever (and holds the ingest lock): a member whose deflate stream
    /// ends before `Z_STREAM_END` makes ZIPFoundation 0.9.20 loop". Here the sizes in both headers agree with
    /// the (cut) data, so only the deflate stream itself tells: it is damage at the offset where it ends, the
    /// other member is read, and the read returns (within 20 s; ZIPFoundation never returned).
    @Test func zipMemberWhoseDeflateStreamEndsEarlyIsDamageNotAHang() throws {
        let content = Array((Self.ndjson + Self.ndjson).utf8)
        var cut = try HandmadeZip.deflated("cut.ndjson", content)
        cut.data.removeLast(cut.data.count / 3)
        let whole = try HandmadeZip.deflated("whole.ndjson", Array(Self.ndjson.utf8))
        let bytes = HandmadeZip.archive([cut, whole])
        let folder = try TemporaryFolder()
        let path = try folder.write("small.zip", bytes)
        let result = try #require(try finishes(within: 20) { try readAll(path) }, "reading the zip did not return")
        #expect(result.members.filter { $0 == "whole.ndjson" }.count == 3)
        let dataEnd = 30 + "cut.ndjson".utf8.count + cut.data.count
        #expect(result.damages == [Damage(file: path, offset: Int64(dataEnd),
                                          reason: "member cut.ndjson: deflate stream cut off before its end (truncated)")])
        // The same bytes in memory (the fuzzing harness's path) give the same answer.
        var records = 0
        let damages = try ArchiveReader().read(bytes: bytes, name: "small.zip") { _ in records += 1 }
        #expect(records == result.records.count)
        #expect(damages.map(\.reason) == result.damages.map(\.reason))
    }

    /// Zip64 (APPNOTE 6.3, 4.3.14-4.3.15, 4.5.3): sizes and offsets that do not fit 32 bits are 0xFFFFFFFF in the
    /// headers, the real ones in the zip64 extra field, and the end record points to a zip64 end record. Exports
    /// over 4 GiB are written so; some writers (Python's `force_zip64`) do it for small ones too.
    @Test func zip64ArchivesAreRead() throws {
        let members = [try HandmadeZip.deflated("a.ndjson", Array(Self.ndjson.utf8)),
                       try HandmadeZip.deflated("b.json", Array(("[" + Self.lines[1] + "]").utf8))]
        let folder = try TemporaryFolder()
        let result = try readAll(try folder.write("big-export.zip", HandmadeZip.archive(members, zip64: true)))
        #expect(result.damages == [])
        #expect(result.texts == Self.lines + [Self.lines[1]])
        #expect(result.members == ["a.ndjson", "a.ndjson", "a.ndjson", "b.json"])
        // Cut before its directory, it is walked through its local headers (zip64 extra fields too).
        let bytes = HandmadeZip.archive(members, zip64: true)
        let directory = try #require(Self.find([0x50, 0x4B, 0x01, 0x02], in: bytes, after: 0))
        let cut = try readAll(try folder.write("cut-export.zip", Array(bytes.prefix(directory + 10))))
        #expect(cut.texts == Self.lines + [Self.lines[1]])
        #expect(cut.damages.map(\.reason) == ["zip cut off or damaged: its central directory is missing (the 2 members before it were read)"])
    }

    /// Many directory entries pointing at one member's bytes are how a few kB of zip inflate to terabytes
    /// (D. Fifield, "A better zip bomb", 2019): the second claim on the same bytes is refused.
    @Test func zipEntriesSharingDataAreRefused() throws {
        let member = try HandmadeZip.deflated("a.ndjson", Array(Self.ndjson.utf8))
        var bytes = HandmadeZip.archive([member, member])
        // Point the second directory entry at the first local header.
        let directory = try #require(Self.find([0x50, 0x4B, 0x01, 0x02], in: bytes, after: 0))
        let second = try #require(Self.find([0x50, 0x4B, 0x01, 0x02], in: bytes, after: directory + 4))
        for i in 0..<4 { bytes[second + 42 + i] = 0 }
        let folder = try TemporaryFolder()
        let result = try readAll(try folder.write("bomb.zip", bytes))
        #expect(result.texts == Self.lines)
        #expect(result.damages.map(\.reason) == ["member a.ndjson: its data overlaps another member's, not read (a zip bomb, or a damaged directory)"])
    }

    static func find(_ needle: [UInt8], in bytes: [UInt8], after start: Int) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        return (max(start, 0)...(bytes.count - needle.count)).first { bytes[$0..<$0 + needle.count].elementsEqual(needle) }
    }

    @Test func sinkErrorsPropagateUnchanged() throws {
        struct Stop: Error, Equatable {}
        let folder = try TemporaryFolder()
        let path = try folder.write("a.tar.gz", try GzipWriter.gzip(TarBuilder.archive([.file("x.ndjson", Array(Self.ndjson.utf8))])))
        var seen = 0
        #expect(throws: Stop.self) {
            _ = try ArchiveReader().read(path: path) { _ in
                seen += 1
                if seen == 2 { throw Stop() }
            }
        }
        #expect(seen == 2)
    }
}

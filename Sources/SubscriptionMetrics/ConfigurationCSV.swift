/// The small RFC 4180 reader the configuration files (price list, FX rates) share: a header row naming the
/// columns, then data rows. Blank lines are skipped; fields are trimmed of surrounding spaces.
struct ConfigurationCSV {
    /// One data row: its 1-based line number and its fields by header name.
    struct Row {
        var line: Int
        var fields: [String: String]

        func value(_ column: String) -> String { fields[column] ?? "" }
    }

    var rows: [Row] = []

    /// Parses `text`, requiring every name in `columns` in the header (in any order, extra columns ignored).
    init(text: String, file: String, columns: [String]) throws(ConfigurationError) {
        let lines = Self.records(text)
        guard let header = lines.first(where: { !$0.fields.allSatisfy(\.isEmpty) }) else {
            throw ConfigurationError(file: file, line: 1, reason: "empty file; expected the header \(columns.joined(separator: ","))")
        }
        let names = header.fields.map { $0.lowercased() }
        for column in columns where !names.contains(column) {
            throw ConfigurationError(file: file, line: header.line,
                                     reason: "header lacks column `\(column)`; expected \(columns.joined(separator: ","))")
        }
        for record in lines where record.line > header.line {
            if record.fields.allSatisfy(\.isEmpty) { continue }
            if record.fields.count != names.count {
                throw ConfigurationError(file: file, line: record.line,
                                         reason: "\(record.fields.count) fields where the header has \(names.count)")
            }
            var fields: [String: String] = [:]
            for (name, value) in zip(names, record.fields) { fields[name] = value }
            rows.append(Row(line: record.line, fields: fields))
        }
    }

    /// Splits text into records of trimmed fields, honouring quoted fields (`""` is a quote) across lines.
    private static func records(_ text: String) -> [(line: Int, fields: [String])] {
        var result: [(line: Int, fields: [String])] = []
        var fields: [String] = []
        var field: [Character] = []
        var quoted = false
        var line = 1
        var recordLine = 1
        var characters = Array(text).makeIterator()
        var pending: Character? = nil
        func trimmed(_ chars: [Character]) -> String {
            String(chars).trimmed(of: " \t")
        }
        while let c = pending ?? characters.next() {
            pending = nil
            if quoted {
                if c == "\"" {
                    let next = characters.next()
                    if next == "\"" { field.append("\"") } else { quoted = false; pending = next }
                } else {
                    if c == "\n" { line += 1 }
                    field.append(c)
                }
                continue
            }
            switch c {
            case "\"": quoted = true
            case ",":
                fields.append(trimmed(field)); field = []
            case "\r\n", "\n", "\r":
                fields.append(trimmed(field)); field = []
                result.append((recordLine, fields)); fields = []
                line += 1
                recordLine = line
            default: field.append(c)
            }
        }
        if !field.isEmpty || !fields.isEmpty {
            fields.append(trimmed(field))
            result.append((recordLine, fields))
        }
        return result
    }
}

extension String {
    /// The string without leading and trailing characters from `set` (Foundation-free, for config fields).
    fileprivate func trimmed(of set: String) -> String {
        var scalars = Substring(self)
        while let first = scalars.first, set.contains(first) { scalars.removeFirst() }
        while let last = scalars.last, set.contains(last) { scalars.removeLast() }
        return String(scalars)
    }
}

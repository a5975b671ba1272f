import ArgumentParser

struct IngestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "ingest", abstract: "Not built yet.")

    func run() throws {
        throw CommandFailure.couldNotFinish("`ingest` is not built yet")
    }
}

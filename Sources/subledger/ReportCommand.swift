import ArgumentParser

struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "report", abstract: "Not built yet.")

    func run() throws {
        throw CommandFailure.couldNotFinish("`report` is not built yet")
    }
}

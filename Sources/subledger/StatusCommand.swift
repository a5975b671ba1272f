import ArgumentParser

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Not built yet.")

    func run() throws {
        throw CommandFailure.couldNotFinish("`status` is not built yet")
    }
}

import ArgumentParser

struct QuarantineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "quarantine", abstract: "Not built yet.")

    func run() throws {
        throw CommandFailure.couldNotFinish("`quarantine` is not built yet")
    }
}

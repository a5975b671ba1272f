import ArgumentParser

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "run", abstract: "Not built yet.")

    func run() throws {
        throw CommandFailure.couldNotFinish("`run` is not built yet")
    }
}

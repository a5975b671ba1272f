import ArgumentParser

struct SimulateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "simulate", abstract: "Not built yet.")

    func run() throws {
        throw CommandFailure.couldNotFinish("`simulate` is not built yet")
    }
}

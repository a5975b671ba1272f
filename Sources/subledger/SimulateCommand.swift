import ArgumentParser
import Foundation
import Pipeline
import Simulator

/// `subledger simulate`: writes realistic archives of both stores plus `truth.json`.
struct SimulateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Write realistic App Store and Google Play archives plus truth.json, the metrics they really hold.",
        discussion: """
        Simulates subscribers from 2024-01-01T00:00Z on both platforms (trials, renewals, billing issues with grace and retry, refunds, upgrades, pauses, resubscribes, one-time products, sandbox and test users) and writes what a backend would have archived: DIR/archives/ (daily multi-member .ndjson.gz, .tar.gz of raw notifications, .zip, .jsonl, a truncated copy), DIR/prices.csv, DIR/apple-root.der (pass it to --apple-root-ca) and DIR/truth.json (the ingest counts and every report table for three scenarios). The same seed always gives byte-identical files.

        Example:
          subledger simulate --out sim --subscribers 1000 --months 18 --seed 1
          subledger run --db sim/ledger.sqlite --out sim/Reports --prices sim/prices.csv --apple-root-ca sim/apple-root.der --as-of 2025-06-30T23:59:59.999Z sim/archives
        """)

    @Option(name: .long, help: "Directory to write into (created if missing).")
    var out: String

    @Option(name: .long, help: "Number of simulated subscribers.")
    var subscribers: Int = 1000

    @Option(name: .long, help: "Number of simulated months from 2024-01.")
    var months: Int = 18

    @Option(name: .long, help: "Seed of the simulation; the same seed gives the same files.")
    var seed: UInt64 = 1

    func validate() throws {
        guard subscribers > 0 else { throw ValidationError("--subscribers must be at least 1") }
        guard (1...120).contains(months) else { throw ValidationError("--months must be between 1 and 120") }
    }

    func run() throws {
        let simulation = Simulation(subscribers: subscribers, months: months, seed: seed)
        do {
            let line = ProgressLine(output: .standardError)
            let summary = try simulation.write(to: out) { done in line.show("simulate: \(done) subscribers") }
            line.finish()
            print("wrote \(summary.files.count) files, \(summary.records) records, \(summary.subscriptions) subscriptions to \(out)")
        } catch {
            throw CommandFailure.couldNotFinish(error.description)
        }
    }
}

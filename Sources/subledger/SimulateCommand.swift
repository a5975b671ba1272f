import ArgumentParser
import Foundation
import Pipeline
import Simulator

/// `subledger simulate`: writes realistic archives of both stores plus `truth.json`.
struct SimulateCommand: LoggingCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Write realistic App Store and Google Play archives plus truth.json, the metrics they really hold.",
        discussion: """
        Simulates subscribers from 2024-01-01T00:00Z on both platforms (trials, introductory offers, renewals, \
        billing issues with grace and retry, refunds, upgrades, pauses, resubscribes, one-time products, sandbox \
        and test users) and writes what a backend would have archived: DIR/archives/ (daily multi-member \
        .ndjson.gz, .tar.gz of raw notifications, .zip, .jsonl, a truncated copy), DIR/prices.csv, \
        DIR/apple-root.der (pass it to --apple-root-ca) and DIR/truth.json (the ingest counts and every report table for three scenarios). \
        Says on stdout how many files, records and subscriptions it wrote; progress goes to stderr. The same \
        seed always gives byte-identical files.

        Examples:
          subledger simulate --out sim --subscribers 1000 --months 18 --seed 1
          subledger run --db sim/ledger.sqlite --out sim/Reports \\
            --prices sim/prices.csv --apple-root-ca sim/apple-root.der \\
            --as-of 2025-06-30 sim/archives
        """)

    @Option(name: .long, help: "Directory to write into (created if missing).")
    var out: String

    @Option(name: .long, help: "Number of simulated subscribers.")
    var subscribers: Int = 1000

    @Option(name: .long, help: "Number of simulated months from 2024-01.")
    var months: Int = 18

    @Option(name: .long, help: "Seed of the simulation; the same seed gives the same files.")
    var seed: UInt64 = 1

    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard subscribers > 0 else { throw ValidationError("--subscribers must be at least 1") }
        guard (1...120).contains(months) else { throw ValidationError("--months must be between 1 and 120") }
    }

    func run() throws {
        let simulation = Simulation(subscribers: subscribers, months: months, seed: seed)
        do {
            let line = ProgressLine(output: progress)
            let started = ContinuousClock.now
            let summary = try simulation.write(to: out) { done in
                line.show(Self.figures(done: done, of: subscribers, since: started))
            }
            line.done(Self.figures(done: subscribers, of: subscribers, since: started))
            print("wrote \(summary.files.count) files, \(summary.records) records, \(summary.subscriptions) subscriptions to \(out)")
        } catch {
            throw CommandFailure.simulation(error)
        }
    }

    /// Subscribers simulated of the total, the rate and the time left.
    static func figures(done: Int, of total: Int, since started: ContinuousClock.Instant) -> ProgressFigures {
        let rate = ProgressRate(since: started)
        var text = "simulate: \(done) of \(total) subscribers"
        var fields: [(key: String, value: String)] = [("command", "simulate"), ("subscribers_done", String(done)),
                                                      ("subscribers_total", String(total))]
        if let percent = rate.percent(Int64(done), of: Int64(total)) {
            text += " (\(percent)%)"
            fields.append(("percent", percent))
        }
        if let left = rate.secondsLeft(Int64(done), of: Int64(total)) {
            text += ", ETA \(ProgressRate.clock(left))"
            fields.append(("eta_seconds", String(left)))
        }
        return ProgressFigures(text: text, fields: fields)
    }
}

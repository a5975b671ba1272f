import Foundation

/// Runs an `async` operation that never truly suspends (X509's `Verifier` with an in-memory store and
/// synchronous policies is `async` only by signature) from synchronous code.
///
/// The task prefers ``InlineExecutor``, which runs each job on the thread that enqueues it, so the operation
/// runs on the caller's thread and never waits for a thread of the cooperative pool: calling this from a
/// pool thread cannot starve the pool. Should the operation ever suspend, it resumes on whichever thread
/// wakes it, and the caller waits on the semaphore.
enum SynchronousAsync {
    static func run<Result: Sendable>(_ operation: @escaping @Sendable () async -> Result) -> Result {
        let box = ResultBox<Result>()
        let done = DispatchSemaphore(value: 0)
        Task(executorPreference: InlineExecutor()) {
            box.value = await operation()
            done.signal()
        }
        done.wait()
        guard let value = box.value else { preconditionFailure("task finished without a result") }
        return value
    }
}

/// A task executor that runs each job immediately, on the enqueuing thread.
final class InlineExecutor: TaskExecutor {
    func enqueue(_ job: consuming ExecutorJob) {
        job.runSynchronously(on: asUnownedTaskExecutor())
    }
}

/// Carries a task's result to the waiting thread; the semaphore orders the write before the read.
private final class ResultBox<Value: Sendable>: @unchecked Sendable {
    var value: Value?
}

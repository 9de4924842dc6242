import Foundation
import Testing

/// The suite's tiers. `./test quick` (the edit-build-test loop) sets
/// ACAPELLA_TEST_TIER=quick and leaves out the tests that take seconds of
/// their own (whole takes recorded, killed and analysed; real recordings
/// read); the full `./test` runs every one.
enum Tier {
    static let full = ProcessInfo.processInfo.environment["ACAPELLA_TEST_TIER"] != "quick"
}

extension Trait where Self == ConditionTrait {
    /// Seconds of its own: run by the full `./test`, not by `./test quick`.
    static var fullSuiteOnly: Self { .enabled(if: Tier.full, "takes seconds: the full ./test runs it, ./test quick leaves it out") }
}

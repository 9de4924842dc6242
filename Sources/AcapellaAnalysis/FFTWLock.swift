internal import CFFTW
public import AcapellaLock

/// FFTW's planner is not thread-safe (only `fftwf_execute` is): every plan
/// in the box is made and destroyed under this one lock.
public let fftwPlanner = VisibleLock<Void>(())

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

@inline(__always) func angleCos(_ x: Double) -> Double { cos(x) }
@inline(__always) func angleSin(_ x: Double) -> Double { sin(x) }

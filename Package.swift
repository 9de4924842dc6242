// swift-tools-version: 6.3
//
// Acapella box. Module layout (see docs/developers/architecture.md):
//   C system libraries  →  AcapellaDevices (I/O edge)
//   AcapellaScore (pure: ticks, maps, .acasong)  →  acapella (CLI, wiring)
import PackageDescription

let strictSwift: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "acapella",
    products: [
        .executable(name: "acapella", targets: ["acapella"]),
        .executable(name: "acapella-bench", targets: ["acapella-bench"]),
        .executable(name: "acapella-fuzz-parser", targets: ["AcapellaFuzzParser"]),
        .executable(name: "acapella-fuzz-importer", targets: ["AcapellaFuzzImporter"]),
        .executable(name: "acapella-alloc-check", targets: ["acapella-alloc-check"]),
        .executable(name: "acapella-fuzz-midi", targets: ["AcapellaFuzzMIDI"]),
        .executable(name: "acapella-fuzz-manifest", targets: ["AcapellaFuzzManifest"]),
        .executable(name: "acapella-fuzz-settings", targets: ["AcapellaFuzzSettings"]),
        .executable(name: "acapella-fuzz-lrc", targets: ["AcapellaFuzzLRC"]),
        .executable(name: "acapella-fuzz-web", targets: ["AcapellaFuzzWeb"]),
    ],
    targets: [
        // MARK: C libraries from Debian, found through pkg-config.
        .systemLibrary(
            name: "CALSA", pkgConfig: "alsa",
            providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(
            name: "CSndFile", pkgConfig: "sndfile",
            providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(
            name: "CGPIOD", pkgConfig: "libgpiod",
            providers: [.apt(["libgpiod-dev"])]),
        .systemLibrary(
            name: "CZip", pkgConfig: "libzip",
            providers: [.apt(["libzip-dev"])]),
        .systemLibrary(
            name: "CZlib", pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]),
        // No pkgConfig: avahi-client's .pc adds -D_REENTRANT, which SwiftPM
        // refuses with a warning; its headers are in /usr/include and the
        // module map links the two libraries (deploy/debian-packages.txt).
        .systemLibrary(
            name: "CAvahi",
            providers: [.apt(["libavahi-client-dev"])]),
        .systemLibrary(
            name: "CExpat", pkgConfig: "expat",
            providers: [.apt(["libexpat1-dev"])]),
        .systemLibrary(
            name: "CMicroHTTPD", pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(
            name: "CCairo", pkgConfig: "cairo-ft",
            providers: [.apt(["libcairo2-dev", "libfreetype-dev"])]),
        .systemLibrary(
            name: "CEBUR128", pkgConfig: "libebur128",
            providers: [.apt(["libebur128-dev"])]),
        .systemLibrary(
            name: "CFFTW", pkgConfig: "fftw3f",
            providers: [.apt(["libfftw3-dev"])]),
        .systemLibrary(
            name: "CSystemd", pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]),
        .systemLibrary(
            name: "CSoxr", pkgConfig: "soxr",
            providers: [.apt(["libsoxr-dev"])]),
        .systemLibrary(
            name: "CRubberBand", pkgConfig: "rubberband",
            providers: [.apt(["librubberband-dev"])]),
        .systemLibrary(
            name: "CNettle", pkgConfig: "nettle",
            providers: [.apt(["nettle-dev"])]),
        // FFmpeg: AAC in MP4 (.m4a), what phones keep. Its headers (Debian's libavformat-dev,
        // libavcodec-dev, libavutil-dev), and a loader that opens the libraries on first use
        // (cffmpeg.h says why): nothing is linked.
        .target(name: "CFFmpeg", linkerSettings: [.linkedLibrary("dl")]),

        // MARK: Pure code: no Foundation, no Glibc.
        .target(name: "AcapellaScore", swiftSettings: strictSwift),

        // MARK: DSP kernels: voices, clicks, limiter. No I/O; libc math only.
        .target(name: "AcapellaDSP", swiftSettings: strictSwift),

        // MARK: The one lock the threads share, seen by Thread Sanitizer (a pthread mutex).
        .target(name: "AcapellaLock", swiftSettings: strictSwift),

        // MARK: Schedules and rendering on the one sample timeline.
        .target(
            name: "AcapellaEngine",
            dependencies: ["AcapellaScore", "AcapellaDSP", "AcapellaLock"],
            swiftSettings: strictSwift),

        // MARK: Hand-edited JSON (settings, manifests): one-line errors naming the key.
        .target(name: "AcapellaJSON", swiftSettings: strictSwift),

        // MARK: Files: audio files (libsndfile; .m4a through FFmpeg), loudness (libebur128), mixdown,
        // takes at another tempo or key (Rubber Band).
        .target(
            name: "AcapellaProject",
            dependencies: ["AcapellaEngine", "AcapellaDSP", "AcapellaScore", "AcapellaJSON", "AcapellaLock", "CSndFile", "CEBUR128", "CZip", "CSoxr", "CFFmpeg", "CRubberBand", "CChild"],
            swiftSettings: strictSwift),

        // MARK: MusicXML and .mxl → Score.
        .target(
            name: "AcapellaMusicXML",
            dependencies: ["AcapellaScore", "CZip", "CExpat"],
            swiftSettings: strictSwift),

        // MARK: I/O edge: the audio device interface, the simulated room.
        .target(
            name: "AcapellaDevices",
            dependencies: ["AcapellaEngine", "AcapellaScore", "AcapellaAnalysis", "CALSA", "CSndFile", "CGPIOD", "CSystemd", "CChild"],
            swiftSettings: strictSwift),

        // MARK: Analysis: the YIN pitch detector (FFTW), the shared FFTW planner lock.
        .target(
            name: "AcapellaAnalysis",
            dependencies: ["AcapellaDSP", "AcapellaLock", "CFFTW"],
            swiftSettings: strictSwift),

        // MARK: Engraving: the song as SMuFL notation, laid out to a display list; SVG. Pure.
        .target(
            name: "AcapellaEngrave",
            dependencies: ["AcapellaScore"],
            swiftSettings: strictSwift),

        // MARK: The engraving as PDF pages through cairo (the font through FreeType).
        .target(
            name: "AcapellaEngravePDF",
            dependencies: ["AcapellaEngrave", "CCairo"],
            swiftSettings: strictSwift),

        // MARK: The web page: routes, pairing and security (pure), and the server (libmicrohttpd).
        .target(
            name: "AcapellaWeb",
            dependencies: ["AcapellaScore", "AcapellaLock"],
            swiftSettings: strictSwift),
        .target(
            name: "AcapellaWebServer",
            dependencies: ["AcapellaWeb", "AcapellaLock", "CMicroHTTPD", "CAvahi", "CZlib", "CNettle"],
            swiftSettings: strictSwift),

        // MARK: Readouts: console and LCD frames, note names, short titles. Pure.
        .target(
            name: "AcapellaStatus",
            dependencies: ["AcapellaDSP"],
            swiftSettings: strictSwift),

        // MARK: Hands-free control: actions, MIDI decoding, foot-switch gestures, bindings.
        .target(
            name: "AcapellaControl",
            dependencies: ["AcapellaEngine", "AcapellaJSON"],
            swiftSettings: strictSwift),

        // MARK: The box: device + engine + recorder + project, put together.
        .target(
            name: "AcapellaBox",
            dependencies: ["AcapellaDSP", "AcapellaStatus", "AcapellaEngine", "AcapellaProject", "AcapellaDevices", "AcapellaScore", "AcapellaControl", "AcapellaAnalysis", "AcapellaLock",
                           "AcapellaEngrave", "AcapellaEngravePDF", "AcapellaWeb", "AcapellaWebServer", "AcapellaMusicXML", "CChild"],
            swiftSettings: strictSwift),

        // MARK: Ground truths (synthetic singers, reference recordings, a
        // choir merging): for the tests and the benchmarks only, never linked
        // into the appliance.
        .target(
            name: "AcapellaTrials",
            dependencies: ["AcapellaBox", "AcapellaAnalysis", "AcapellaDevices", "AcapellaEngine", "AcapellaProject", "AcapellaScore"],
            swiftSettings: strictSwift),

        // MARK: Command-line parsing and song files, for both executables.
        .target(
            name: "AcapellaCLI",
            dependencies: ["AcapellaScore", "AcapellaMusicXML", "AcapellaProject"],
            swiftSettings: strictSwift),

        // MARK: The executables: the appliance, and the benchmarks apart from it.
        .executableTarget(
            name: "acapella-bench",
            dependencies: ["AcapellaTrials", "AcapellaEngrave", "AcapellaCLI", "AcapellaDSP", "AcapellaLock", "AcapellaScore", "AcapellaMusicXML", "AcapellaEngine", "AcapellaProject", "AcapellaDevices", "AcapellaBox", "AcapellaAnalysis"],
            swiftSettings: strictSwift),
        .executableTarget(
            name: "acapella",
            dependencies: ["AcapellaEngrave", "AcapellaEngravePDF", "AcapellaCLI", "AcapellaDSP", "AcapellaStatus", "AcapellaScore", "AcapellaMusicXML", "AcapellaEngine", "AcapellaProject", "AcapellaDevices", "AcapellaBox", "AcapellaControl", "AcapellaAnalysis"],
            swiftSettings: strictSwift),

        // libFuzzer entry point; build with
        //   swift build -c release --sanitize=fuzzer --product acapella-fuzz-parser
        // libFuzzer supplies main(), so this target is parsed as a library.
        .executableTarget(
            name: "AcapellaFuzzParser",
            dependencies: ["AcapellaScore", "AcapellaFuzzSupport"],
            swiftSettings: strictSwift + [.unsafeFlags(["-parse-as-library"])]),

        .target(name: "AcapellaFuzzSupport", swiftSettings: strictSwift),
        .executableTarget(
            name: "AcapellaFuzzImporter",
            dependencies: ["AcapellaMusicXML", "AcapellaFuzzSupport"],
            swiftSettings: strictSwift + [.unsafeFlags(["-parse-as-library"])]),

        .executableTarget(
            name: "AcapellaFuzzMIDI",
            dependencies: ["AcapellaControl", "AcapellaFuzzSupport"],
            swiftSettings: strictSwift + [.unsafeFlags(["-parse-as-library"])]),

        .executableTarget(
            name: "AcapellaFuzzManifest",
            dependencies: ["AcapellaProject", "AcapellaFuzzSupport"],
            swiftSettings: strictSwift + [.unsafeFlags(["-parse-as-library"])]),

        .executableTarget(
            name: "AcapellaFuzzSettings",
            dependencies: ["AcapellaControl", "AcapellaFuzzSupport"],
            swiftSettings: strictSwift + [.unsafeFlags(["-parse-as-library"])]),

        .executableTarget(
            name: "AcapellaFuzzLRC",
            dependencies: ["AcapellaScore", "AcapellaFuzzSupport"],
            swiftSettings: strictSwift + [.unsafeFlags(["-parse-as-library"])]),

        .executableTarget(
            name: "AcapellaFuzzWeb",
            dependencies: ["AcapellaWeb", "AcapellaScore", "AcapellaFuzzSupport"],
            swiftSettings: strictSwift + [.unsafeFlags(["-parse-as-library"])]),

        // Interposes malloc to count the render thread's allocations; only
        // ever linked into acapella-alloc-check.
        .target(name: "CAllocCounter"),
        // Starts the box's children bounded and tied to it (vfork, setpgid,
        // PR_SET_PDEATHSIG, setrlimit, exec): see Sources/CChild/include/child.h.
        .target(name: "CChild"),
        .executableTarget(
            name: "acapella-alloc-check",
            dependencies: ["AcapellaEngine", "AcapellaProject", "AcapellaScore", "CAllocCounter"],
            swiftSettings: strictSwift),

        .testTarget(
            name: "AcapellaMusicXMLTests",
            dependencies: ["AcapellaMusicXML", "AcapellaScore", "CZip"],
            exclude: ["Golden", "Regressions"],
            swiftSettings: strictSwift),
        .testTarget(
            name: "AcapellaEngineTests",
            dependencies: ["AcapellaEngine", "AcapellaDSP", "AcapellaProject", "AcapellaScore", "CEBUR128"],
            swiftSettings: strictSwift),
        .testTarget(
            name: "AcapellaBoxTests",
            dependencies: ["AcapellaBox", "AcapellaTrials", "AcapellaCLI", "AcapellaAnalysis", "AcapellaDSP", "AcapellaControl", "AcapellaStatus", "AcapellaDevices", "AcapellaEngine", "AcapellaProject", "AcapellaScore"],
            swiftSettings: strictSwift),
        .testTarget(
            name: "AcapellaControlTests",
            dependencies: ["AcapellaControl", "AcapellaEngine", "AcapellaScore"],
            swiftSettings: strictSwift),
        .testTarget(
            name: "AcapellaStatusTests",
            dependencies: ["AcapellaStatus"],
            swiftSettings: strictSwift),
        .testTarget(
            name: "AcapellaAnalysisTests",
            dependencies: ["AcapellaAnalysis", "AcapellaProject"],
            swiftSettings: strictSwift),
        .testTarget(
            name: "AcapellaEngraveTests",
            dependencies: ["AcapellaEngrave", "AcapellaEngravePDF", "AcapellaScore", "AcapellaMusicXML"],
            swiftSettings: strictSwift),
        .testTarget(
            name: "AcapellaWebTests",
            dependencies: ["AcapellaWeb", "AcapellaWebServer"],
            swiftSettings: strictSwift),
        .testTarget(
            name: "AcapellaScoreTests",
            dependencies: ["AcapellaScore"],
            exclude: ["Golden", "Fixtures"],
            swiftSettings: strictSwift),
    ],
    swiftLanguageModes: [.v6]
)

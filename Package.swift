// swift-tools-version:6.1
import PackageDescription

/// The modules a check or a durable write passes through skip Swift's run-time exclusivity checks in
/// release builds.
///
/// Measured with `Tools/profile/check-cost.py`: the checks (`swift_beginAccess` on class properties and on
/// the ByteBuffer code NIO inlines into these modules) were about 690 of 6,740 instructions a check, and
/// about 900 of 25,300 a grant in the log writer (EntitledStorage). The
/// shared state in these modules is guarded by locks or owned by one event loop, which is what the checks
/// would otherwise verify; debug builds (the test suite) keep them, so a violation still fails the tests.
/// Unsafe flags are allowed in a root package only; `EntitledClient` does not use these modules, so a
/// package depending on the client is not affected.
let hotPathSettings: [SwiftSetting] = [
    .unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))
]

let package = Package(
    name: "entitled",
    // macOS 15: swift-configuration's API is available from there (`entitled` itself targets Linux).
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "entitled", targets: ["entitled"]),
        .executable(name: "entitlectl", targets: ["entitlectl"]),
        .executable(name: "entitled-datadir", targets: ["entitled-datadir"]),
        .executable(name: "entitled-bench", targets: ["entitled-bench"]),
        .executable(name: "entitled-loadgen", targets: ["entitled-loadgen"]),
        .executable(name: "entitled-stores", targets: ["entitled-stores"]),
        .library(name: "EntitledCore", targets: ["EntitledCore"]),
        .library(name: "EntitledWire", targets: ["EntitledWire"]),
        .library(name: "EntitledServer", targets: ["EntitledServer"]),
        .library(name: "EntitledStorage", targets: ["EntitledStorage"]),
        .library(name: "EntitledClient", targets: ["EntitledClient"]),
        .library(name: "EntitledCluster", targets: ["EntitledCluster"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        // Already built for SwiftNIO: the loops' single-writer statistics counters.
        .package(url: "https://github.com/apple/swift-atomics.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // `entitled`'s and `entitled-stores`' settings: command line > environment > file > default. Without its default trait
        // (JSON): that provider links full Foundation (ICU, which valgrind cannot load; see EntitledStorage's
        // Threading.swift) and takes any key of any JSON file, where `entitled` refuses unknown and repeated keys.
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0", traits: []),
        // Cluster mode's system of record: PostgreSQL's wire protocol, SCRAM authentication, LISTEN/NOTIFY.
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        // entitled-stores: the stores' notifications over HTTP, kept out of `entitled` and its check path.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        // Hummingbird's header types (Stripe-Signature), named directly.
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        // Already built for Hummingbird: the HTTP request and response parts its channel pipeline carries, which
        // entitled-stores' request deadline reads.
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        // Already built for postgres-nio: the stores' signatures (HMAC-SHA256, ECDSA P-256).
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        // The App Store's signed notifications: their X.509 chains, verified up to Apple's root.
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        // Google Play's OAuth token and Developer API calls.
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        // RevenueCat's exports are gzip files: read a chunk at a time through zlib.
        .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
        // The App Store Server API's bearer token: a JWT signed ES256 with the in-app purchase key.
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
    ],
    targets: [
        // A cache prefetch hint for the check path (EntitledCore's StringSlotTable): Swift cannot spell it.
        .target(name: "CPrefetch"),
        // CRC-32C with the CPU's instruction where it has one (EntitledStorage's CRC32C): Swift cannot spell it.
        .target(name: "CCRC32C"),
        // The domain model and the in-memory store. Knows nothing of sockets or JSON.
        .target(
            name: "EntitledCore",
            dependencies: [
                "CPrefetch",
                // A page of a long audit trail: the newest entries of many, without sorting them all.
                .product(name: "HeapModule", package: "swift-collections"),
            ],
            swiftSettings: hotPathSettings
        ),
        // Durability: the append-only log, snapshots and recovery of an EntitlementStore in a data directory.
        .target(
            name: "EntitledStorage",
            dependencies: [
                "CCRC32C",
                "EntitledCore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                // The log's progress, read by every answered check when reads wait for the sync.
                .product(name: "Atomics", package: "swift-atomics"),
            ],
            swiftSettings: hotPathSettings
        ),
        // Cluster mode: several nodes share one PostgreSQL as the system of record, each keeping the whole
        // store in memory as a replica (the `ReplicatedLog` the server writes through). Knows nothing of sockets.
        .target(
            name: "EntitledCluster",
            dependencies: [
                "EntitledCore",
                "EntitledStorage",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                // TLS to the database (`sslmode`): PostgresNIO's configuration takes NIOSSL's.
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // The wire codec: request lines (bytes) to typed requests, results to response lines (bytes).
        .target(
            name: "EntitledWire",
            dependencies: [
                "EntitledCore",
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: hotPathSettings
        ),
        // Linux's epoll, eventfd and accept4 for the server's event loops.
        .systemLibrary(name: "CEpoll"),
        // io_uring for the event loops (Debian's liburing-dev): sends and receives of a whole loop turn in
        // one system call. The loops fall back to plain system calls where the kernel refuses a ring.
        .target(name: "CURing", linkerSettings: [.linkedLibrary("uring")]),
        // The socket server: event loops on epoll, framing, connections, dispatch to the store.
        .target(
            name: "EntitledServer",
            dependencies: [
                "CEpoll",
                "CURing",
                "EntitledCore",
                "EntitledStorage",
                "EntitledWire",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // The loops' deadlines (LoopDeadlines: parked reads, lingering connections, the sweep).
                .product(name: "HeapModule", package: "swift-collections"),
                // TLS on TCP: NIOSSL's handler, driven by the loops through an EmbeddedChannel per connection.
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Atomics", package: "swift-atomics"),
            ],
            swiftSettings: hotPathSettings
        ),
        // Prometheus metrics on their own HTTP port: the server's counters through swift-metrics and
        // swift-prometheus. The server itself knows nothing of HTTP or Prometheus.
        .target(
            name: "EntitledMetrics",
            dependencies: [
                "EntitledServer",
                "EntitledWire",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // Both executables' settings, layered one way: command line > environment > configuration file >
        // default, with the same checks of the file and the environment and the same messages.
        .target(
            name: "EntitledConfiguration",
            dependencies: [
                "EntitledCore",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "entitled",
            dependencies: [
                "EntitledMetrics",
                "EntitledCluster",
                "EntitledConfiguration",
                "EntitledCore",
                "EntitledServer",
                // The JSON log lines' string escaping.
                "EntitledWire",
                "EntitledStorage",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // SIGHUP: the auth file's reload (SIGTERM and SIGINT are StopSignals', on a dispatch queue).
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Configuration", package: "swift-configuration"),
            ]
        ),
        // A Swift client of the protocol: requests, responses, a connection. Knows nothing of the server.
        // The blocking connection is POSIX sockets (with NIOSSL for TLS); the async one (Async/) runs on
        // SwiftNIO's event loops.
        .target(
            name: "EntitledClient",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                // NIOSSL's handshake-completed event, which the async connection waits for.
                .product(name: "NIOTLS", package: "swift-nio"),
            ]
        ),
        // The stores' notifications: verifying them and turning them into protocol requests, sent through
        // the client. Serves no HTTP (entitled-stores does); it calls the stores' APIs over HTTP
        // (AsyncHTTPClient, with NIOHTTP1's methods and headers).
        .target(
            name: "EntitledStores",
            dependencies: [
                "EntitledClient",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                // RS256: Google's service-account assertions and Pub/Sub push tokens.
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "CompressNIO", package: "compress-nio"),
                // ES256 JWTs for the App Store Server API (AppStoreAPIToken).
                .product(name: "JWTKit", package: "jwt-kit"),
            ]
        ),
        // `entitled-stores`: the HTTP receiver (Hummingbird) in front of EntitledStores.
        .executableTarget(
            name: "entitled-stores",
            dependencies: [
                "EntitledStores",
                "EntitledClient",
                "EntitledConfiguration",
                .product(name: "Hummingbird", package: "hummingbird"),
                // Its HTTP/1 channel's idle timeout and its connection limiter.
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                // The request deadline and the roster of connections (a handler between those parts and Hummingbird).
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                // Its settings, layered as `entitled`'s are: command line > environment > file > default.
                .product(name: "Configuration", package: "swift-configuration"),
            ],
            exclude: ["STORES.md"]
        ),
        // The system's libedit (Debian libedit-dev), with fixed-signature shims for its variadic functions.
        .systemLibrary(
            name: "CLibEdit",
            pkgConfig: "libedit",
            providers: [.apt(["libedit-dev"]), .brew(["libedit"])]
        ),
        // The admin console's logic: command syntax, completion, hints, rendering. Knows nothing of libedit.
        .target(name: "EntitledConsole", dependencies: ["EntitledClient"]),
        // `entitlectl`: the console's executable, with the libedit line editor.
        .executableTarget(
            name: "entitlectl",
            dependencies: [
                "CLibEdit",
                "EntitledClient",
                "EntitledConsole",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        // Operator tools, built with the package.
        .executableTarget(
            name: "entitled-datadir",
            dependencies: [
                "EntitledStorage",
                "EntitledCluster",
                "EntitledCore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tools/entitled-datadir"
        ),
        // The benchmarks against Redis: check load (issue 5) and durability (issue 3), against real processes.
        .executableTarget(
            name: "entitled-bench",
            dependencies: [
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            path: "Tools/entitled-bench",
            // Published results (the README's table and plot), not sources.
            exclude: ["results", "README.md"]
        ),
        // The benchmark's neutral load generator, in C: one thread, epoll, no spinning, request bytes made
        // in advance; `entitled-bench checks` runs it from beside itself.
        .executableTarget(
            name: "entitled-loadgen",
            path: "Tools/entitled-loadgen",
            cSettings: [.unsafeFlags(["-O2"])]
        ),
        .testTarget(name: "EntitledCoreTests", dependencies: ["EntitledCore", "EntitledTestSupport"]),
        // The stores' notifications, verified and mapped, against real entitled and entitled-stores processes.
        .testTarget(
            name: "EntitledStoresTests",
            dependencies: [
                "EntitledStores", "EntitledClient", "EntitledTestSupport", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"), .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            // The stand-in for Google's OAuth and Play Developer API endpoints, run by python3.
            exclude: ["Fixtures"]
        ),
        // Cluster mode against real PostgreSQL servers and real `entitled` processes (skipped, with the
        // reason, where PostgreSQL cannot be had), with Tools/faults/fault_proxy.py between a node and the
        // database where a test needs a network that misbehaves.
        .testTarget(
            name: "EntitledClusterTests",
            dependencies: ["EntitledCluster", "EntitledClient", "EntitledTestSupport"]
        ),
        // Checks of the repository itself: every relative Markdown link resolves.
        .testTarget(name: "RepositoryTests"),
        .testTarget(name: "EntitledClientTests", dependencies: ["EntitledClient", "EntitledTestSupport"]),
        .testTarget(name: "EntitledConsoleTests", dependencies: ["EntitledConsole", "EntitledClient"]),
        .testTarget(name: "EntitlectlTests", dependencies: ["EntitledClient", "EntitledTestSupport"]),
        // Test helpers shared by the test targets: the real server as a child process, temporary folders, a
        // socket spoken to byte by byte, Python programs run from the package root, the client's test helpers.
        .target(name: "EntitledTestSupport", dependencies: ["EntitledClient"], path: "Tests/EntitledTestSupport"),
        // The helpers' own tests: the real PostgreSQL server the cluster tests run against.
        .testTarget(name: "EntitledTestSupportTests", dependencies: ["EntitledTestSupport"]),
        .testTarget(name: "EntitledStorageTests", dependencies: ["EntitledStorage", "EntitledCore", "EntitledTestSupport"]),
        .testTarget(
            name: "EntitledWireTests",
            dependencies: ["EntitledWire", "EntitledCore", .product(name: "NIOCore", package: "swift-nio")]
        ),
        // The socket server in process: its loops, framing, answer queue, commit hold, request processor,
        // authentication and limits, through `EntitledServer` started by the test itself.
        .testTarget(
            name: "EntitledServerTests",
            dependencies: [
                "EntitledClient",
                "EntitledServer",
                "EntitledStorage",
                "EntitledTestSupport",
                "EntitledWire",
                "EntitledCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            // The TLS tests' self-signed certificates and keys, read by path (by EntitledTests, entitlectl's
            // tests and the Python client's too, through TestCertificates).
            exclude: ["Fixtures"]
        ),
        // The `entitled` executable run as a real process, as EntitlectlTests runs `entitlectl`: its flags,
        // start-up errors and warnings, signals, the auth file's reload, TLS options, durability across
        // restarts and kill -9, the data directory it starts on, and entitled-loadgen against it. The modules
        // it imports only write the data directories a test starts the process on.
        .testTarget(
            name: "EntitledTests",
            dependencies: [
                "EntitledClient",
                "EntitledTestSupport",
                "EntitledCore",
                "EntitledStorage",
                "EntitledServer",
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // Protocol/ proved against a real server: the conformance scenarios and the Python client.
        .testTarget(name: "ProtocolTests", dependencies: ["EntitledClient", "EntitledTestSupport"]),
        // The Prometheus exposition of the server's counters, in process and through `entitled --metrics-port`.
        .testTarget(
            name: "EntitledMetricsTests",
            dependencies: [
                "EntitledMetrics",
                "EntitledServer",
                "EntitledStorage",
                "EntitledCore",
                "EntitledWire",
                "EntitledClient",
                "EntitledTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The settings' layers (command line > environment > file > default) and their checks, in process and
        // through `entitled --config`.
        .testTarget(
            name: "EntitledConfigurationTests",
            dependencies: [
                "EntitledConfiguration", "EntitledClient", "EntitledTestSupport",
                .product(name: "Configuration", package: "swift-configuration"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

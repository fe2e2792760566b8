import EntitledTestSupport
import Testing

/// Every cluster suite, one test at a time: they start real PostgreSQL servers, proxies and `entitled`
/// nodes, and several at once on a 2-core machine made nodes miss their deadlines (and child processes
/// started concurrently inherit each other's pipes).
@Suite("Cluster mode on real PostgreSQL", .requiresPostgres, .serialized)
enum ClusterTests {}

package dev.entitled.client;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.TestInstance;

/**
 * Every scenario of Protocol/conformance through the client ({@link ScenarioRunner}): those of the folder
 * against a fresh server, those of restricted/ against one started with that folder's auth file and
 * {@code --max-connections 4}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConformanceTest {
    private TestServer server;
    private TestServer restricted;

    @BeforeAll
    void startServers() {
        server = TestServer.start();
        restricted = TestServer.start("--auth", TestServer.repo().resolve("Protocol/conformance/restricted/auth.json").toString(),
                "--max-connections", "4");
    }

    @AfterAll
    void stopServers() {
        try {
            server.close();
        } finally {
            restricted.close();
        }
    }

    @TestFactory
    Stream<DynamicTest> scenarios() throws IOException {
        return tests(TestServer.repo().resolve("Protocol/conformance"), () -> server);
    }

    @TestFactory
    Stream<DynamicTest> restrictedScenarios() throws IOException {
        return tests(TestServer.repo().resolve("Protocol/conformance/restricted"), () -> restricted);
    }

    private static Stream<DynamicTest> tests(Path folder, java.util.function.Supplier<TestServer> target) throws IOException {
        List<Path> files;
        try (Stream<Path> listing = Files.list(folder)) {
            files = listing.filter(p -> p.toString().endsWith(".ndjson")).sorted().collect(Collectors.toList());
        }
        assertFalse(files.isEmpty(), "no scenarios in " + folder);
        return files.stream().map(file -> DynamicTest.dynamicTest(file.getFileName().toString(), () -> {
            NodeAddress address = NodeAddress.tcp("127.0.0.1", target.get().port);
            String failure = ScenarioRunner.run(file, address);
            assertNull(failure, file.getFileName() + ": " + failure);
        }));
    }
}

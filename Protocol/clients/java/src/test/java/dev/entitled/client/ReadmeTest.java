package dev.entitled.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;

/** The README's code blocks, compiled and run against a real server: each session works as shown. */
class ReadmeTest {
    @Test
    void theFirstSessionRuns() throws Exception {
        String readme = Files.readString(TestServer.repo().resolve("Protocol/clients/java/README.md"));
        Matcher block = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL).matcher(readme);
        assertTrue(block.find(), "the README has a java code block");
        try (TestServer server = TestServer.start()) {
            List<String> lines = run("FirstSession", block.group(1), server);
            assertEquals(3, lines.size(), "what it printed: " + lines);
            assertTrue(lines.get(0).startsWith("pro: true, until 20"), lines.get(0));
            assertEquals("not_found, applied: false", lines.get(1));
            assertEquals("async: true", lines.get(2));
        }
    }

    @Test
    void theChangeFeedSessionCopiesThenFollows() throws Exception {
        String readme = Files.readString(TestServer.repo().resolve("Protocol/clients/java/README.md"));
        Matcher block = Pattern.compile("## The change feed and exports\\n.*?```java\\n(.*?)```", Pattern.DOTALL).matcher(readme);
        assertTrue(block.find(), "the README's change feed section has a java code block");
        // The follower's last read waits on the server when it is closed: stop without waiting for it.
        try (TestServer server = TestServer.start("--shutdown-timeout", "1")) {
            try (EntitledClient client = EntitledClient.connect(server.options().build())) {
                for (int i = 0; i < 3; i++) {
                    client.sync().grant(GrantRequest.user("readme.u" + i, "prod_pro_monthly"));
                }
            }
            List<String> lines = run("FeedSession", block.group(1), server);
            // Three memberships copied, bob's grant (change 4) followed.
            assertEquals(List.of("4 memberships, up to change 4"), lines);
        }
    }

    /** Compiles {@code body} as the body of a method of class {@code name}, runs it, and returns what it printed. */
    private static List<String> run(String name, String body, TestServer server) throws Exception {
        String source = "import dev.entitled.client.*;\nimport java.time.*;\nimport java.util.*;\n"
                + "public class " + name + " {\n    public static void run() throws Exception {\n"
                + body.replace("127.0.0.1:7117", server.address()) + "\n    }\n}\n";
        Path directory = Files.createTempDirectory("entitled-readme-");
        Files.writeString(directory.resolve(name + ".java"), source);
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        int status = compiler.run(null, null, null, "-d", directory.toString(),
                "-cp", classpath(), directory.resolve(name + ".java").toString());
        assertEquals(0, status, "the README's block compiles: " + name);

        PrintStream original = System.out;
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        try (URLClassLoader loader = new URLClassLoader(new URL[] {directory.toUri().toURL()}, ReadmeTest.class.getClassLoader())) {
            System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
            Method run = loader.loadClass(name).getMethod("run");
            run.invoke(null);
        } finally {
            System.setOut(original);
        }
        try (var files = Files.list(directory)) {
            for (Path file : files.toList()) {
                Files.delete(file);
            }
        }
        Files.delete(directory);
        return printed.toString(StandardCharsets.UTF_8).lines().toList();
    }

    /** Where the client's classes and Jackson's were loaded from. */
    private static String classpath() throws Exception {
        StringBuilder path = new StringBuilder();
        for (Class<?> type : List.of(EntitledClient.class, com.fasterxml.jackson.databind.JsonNode.class,
                com.fasterxml.jackson.core.JsonParser.class, com.fasterxml.jackson.annotation.JsonProperty.class)) {
            path.append(path.length() > 0 ? java.io.File.pathSeparator : "")
                    .append(Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI()));
        }
        return path.toString();
    }
}

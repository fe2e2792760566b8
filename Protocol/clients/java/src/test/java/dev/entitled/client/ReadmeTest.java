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

/** The README's first code block, compiled and run against a real server: the first session works as shown. */
class ReadmeTest {
    @Test
    void theFirstSessionRuns() throws Exception {
        String readme = Files.readString(TestServer.repo().resolve("Protocol/clients/java/README.md"));
        Matcher block = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL).matcher(readme);
        assertTrue(block.find(), "the README has a java code block");
        try (TestServer server = TestServer.start()) {
            String body = block.group(1).replace("127.0.0.1:7117", server.address());
            String source = "import dev.entitled.client.*;\n"
                    + "public class FirstSession {\n    public static void run() throws Exception {\n" + body + "\n    }\n}\n";
            Path directory = Files.createTempDirectory("entitled-readme-");
            Files.writeString(directory.resolve("FirstSession.java"), source);
            JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
            int status = compiler.run(null, null, null, "-d", directory.toString(),
                    "-cp", classpath(), directory.resolve("FirstSession.java").toString());
            assertEquals(0, status, "the README's first block compiles");

            PrintStream original = System.out;
            ByteArrayOutputStream printed = new ByteArrayOutputStream();
            try (URLClassLoader loader = new URLClassLoader(new URL[] {directory.toUri().toURL()}, getClass().getClassLoader())) {
                System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
                Method run = loader.loadClass("FirstSession").getMethod("run");
                run.invoke(null);
            } finally {
                System.setOut(original);
            }
            for (String file : List.of("FirstSession.java", "FirstSession.class")) {
                Files.deleteIfExists(directory.resolve(file));
            }
            Files.delete(directory);
            List<String> lines = printed.toString(StandardCharsets.UTF_8).lines().toList();
            assertEquals(3, lines.size(), "what it printed: " + lines);
            assertTrue(lines.get(0).startsWith("pro: true, until 20"), lines.get(0));
            assertEquals("not_found, applied: false", lines.get(1));
            assertEquals("async: true", lines.get(2));
        }
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

package dev.entitled.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** TLS with a self-signed certificate, and tokens of an auth file. */
class SecurityTest {
    private static final String ADMIN = "java-admin-token-0001";
    private static final String CHECK = "java-check-token-0001";

    @Test
    void tlsWithASelfSignedCertificate() throws Exception {
        Path keys = TestServer.newDirectory();
        Path cert = keys.resolve("cert.pem");
        Path key = keys.resolve("key.pem");
        Process openssl = new ProcessBuilder("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                "-keyout", key.toString(), "-out", cert.toString()).redirectErrorStream(true).start();
        openssl.getInputStream().readAllBytes();
        assertEquals(0, openssl.waitFor(), "openssl made the certificate");
        try (TestServer server = TestServer.start(TestServer.newDirectory(), 0, "--tls-cert", cert.toString(), "--tls-key", key.toString())) {
            try (EntitledClient trusted = EntitledClient.connect(server.options().tlsTrust(cert).build())) {
                trusted.sync().grant(GrantRequest.user("tls.u", "tls.p"));
                assertTrue(trusted.sync().check(CheckRequest.user("tls.u")).active());
            }
            try (EntitledClient byName = EntitledClient.connect(server.options().tlsTrust(cert).tlsServerName("localhost").build())) {
                byName.sync().ping();
            }
            CannotConnectException untrusted = assertThrows(CannotConnectException.class,
                    () -> EntitledClient.connect(server.options().tlsSystemTrust().build()));
            assertTrue(untrusted.getMessage().contains("not trusted"), untrusted.getMessage());

            try (EntitledClient plain = EntitledClient.create(server.options().build())) {
                TlsRequiredException required = assertThrows(TlsRequiredException.class, () -> plain.sync().ping());
                assertFalse(required.mayHaveBeenApplied());
            }
        }
        try (TestServer plainServer = TestServer.start()) {
            CannotConnectException notTls = assertThrows(CannotConnectException.class,
                    () -> EntitledClient.connect(plainServer.options().tlsTrust(cert).build()));
            assertTrue(notTls.getMessage().contains("does not speak TLS"), notTls.getMessage());
        } finally {
            Files.delete(cert);
            Files.delete(key);
            Files.delete(keys);
        }
    }

    @Test
    void tokensOfAnAuthFile() throws Exception {
        Path directory = TestServer.newDirectory();
        Path auth = directory.resolve("auth.json");
        Files.writeString(auth, "[{\"name\": \"java-admin\", \"token\": \"" + ADMIN + "\", \"role\": \"admin\"},"
                + " {\"name\": \"java-check\", \"token\": \"" + CHECK + "\", \"role\": \"check\"}]");
        try (TestServer server = TestServer.start(directory, 0, "--auth", auth.toString())) {
            try (EntitledClient admin = EntitledClient.connect(server.options().token(ADMIN).build())) {
                admin.sync().grant(GrantRequest.user("auth.u", "auth.p"));
                assertEquals(List.of("auth.p"), admin.sync().customer(CustomerRequest.user("auth.u")).activeProducts());
                assertEquals(2, admin.sync().reload());
                String actor = admin.sync().history(HistoryRequest.user("auth.u")).items().get(0).actor();
                assertEquals("java-admin", actor);
            }
            try (EntitledClient reader = EntitledClient.connect(server.options().token(CHECK).build())) {
                assertTrue(reader.sync().check(CheckRequest.user("auth.u")).active());
                ForbiddenException forbidden = assertThrows(ForbiddenException.class,
                        () -> reader.sync().grant(GrantRequest.user("auth.u", "auth.q")));
                assertFalse(forbidden.mayHaveBeenApplied());
            }
            try (EntitledClient anonymous = EntitledClient.connect(server.options().build())) {
                anonymous.sync().ping();
                assertThrows(UnauthorizedException.class, () -> anonymous.sync().check(CheckRequest.user("auth.u")));
            }
            UnauthorizedException refused = assertThrows(UnauthorizedException.class,
                    () -> EntitledClient.connect(server.options().token("not-a-token-of-the-file").build()));
            assertFalse(refused.getMessage().contains("not-a-token-of-the-file"), "the token is never shown");

            EntitledConnection connection = EntitledConnection.open(server.options().build().nodes().get(0),
                    server.options().build()).join();
            try (connection) {
                AuthResult result = connection.auth(CHECK).join();
                assertEquals("java-check", result.name());
                assertEquals("check", result.role());
            }
        }
    }
}

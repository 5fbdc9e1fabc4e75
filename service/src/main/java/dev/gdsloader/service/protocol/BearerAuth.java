package dev.gdsloader.service.protocol;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.Map;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightClientMiddleware;
import org.apache.arrow.flight.auth2.Auth2Constants;
import org.apache.arrow.flight.auth2.CallHeaderAuthenticator;

/**
 * The service's bearer-token authentication (service/README.md, "Security"): one shared token, sent by clients as
 * {@code Authorization: Bearer TOKEN} on every call and checked by Flight's server middleware
 * ({@link CallHeaderAuthenticator}, installed with {@code FlightServer.Builder.headerAuthenticator}). A call without the
 * header, or with another token, ends UNAUTHENTICATED before the producer sees it; the message names neither the token
 * nor anything of the server. Tokens are compared in constant time (SHA-256 of both, {@link MessageDigest#isEqual}).
 *
 * <p>A token is 16 to 4096 printable ASCII characters without spaces (e.g. {@code openssl rand -hex 32}). Stateless;
 * thread-safe.
 */
public final class BearerAuth {
    /** The environment variable {@code gdsloader serve} (and {@link #fromEnvironment}) reads a token from. */
    public static final String ENVIRONMENT_VARIABLE = "GDSLOADER_TOKEN";
    /** Fewest characters of a token. */
    public static final int MIN_LENGTH = 16;
    private static final int MAX_LENGTH = 4096;

    private BearerAuth() {
    }

    /**
     * Reads a token file: its first line, without surrounding white space.
     *
     * @param file the file (e.g. mode 0600, owned by the server's user)
     * @return the token
     * @throws IOException naming the file if it cannot be read, or is not a regular file (a directory, a FIFO)
     * @throws IllegalArgumentException naming the file if its first line is not a valid token ({@link #check})
     */
    public static String read(Path file) throws IOException {
        List<String> lines;
        if (Files.exists(file) && !Files.isRegularFile(file)) { // a directory, or a FIFO that would block the read
            throw new IOException("token file " + file + " is not a regular file: expected a file whose first line is the token");
        }
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new IOException("token file " + file + " does not exist", e);
        } catch (java.nio.charset.MalformedInputException e) {
            throw new IllegalArgumentException("token file " + file + ": not UTF-8 text (a token is printable ASCII)", e);
        }
        String token = lines.isEmpty() ? "" : lines.getFirst().strip();
        try {
            return check(token);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("token file " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * @param environment the process environment ({@code System.getenv()})
     * @return the token in {@value #ENVIRONMENT_VARIABLE}, stripped, or null if unset or empty
     * @throws IllegalArgumentException naming the variable if it holds an invalid token
     */
    public static String fromEnvironment(Map<String, String> environment) {
        String v = environment.get(ENVIRONMENT_VARIABLE);
        if (v == null || v.isBlank()) {
            return null;
        }
        try {
            return check(v.strip());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("environment variable " + ENVIRONMENT_VARIABLE + ": " + e.getMessage(), e);
        }
    }

    /**
     * @param token a token
     * @return {@code token}
     * @throws IllegalArgumentException if it is shorter than {@value #MIN_LENGTH} or longer than 4096 characters, or
     *     holds a character that is not printable ASCII (space included); the message never quotes the token
     */
    public static String check(String token) {
        if (token == null || token.length() < MIN_LENGTH || token.length() > MAX_LENGTH) {
            throw new IllegalArgumentException("a bearer token must have " + MIN_LENGTH + " to " + MAX_LENGTH
                    + " characters, this one has " + (token == null ? 0 : token.length()) + " (e.g. openssl rand -hex 32)");
        }
        for (int i = 0; i < token.length(); i++) {
            char c = token.charAt(i);
            if (c <= ' ' || c > '~') {
                throw new IllegalArgumentException("a bearer token is printable ASCII without spaces; character " + i
                        + " is not (e.g. openssl rand -hex 32)");
            }
        }
        return token;
    }

    /**
     * @param token the server's token ({@link #check}ed)
     * @return the authenticator that admits calls carrying {@code Authorization: Bearer TOKEN} (peer identity
     *     {@code "bearer"}) and refuses others with UNAUTHENTICATED
     */
    public static CallHeaderAuthenticator authenticator(String token) {
        byte[] expected = sha256(check(token));
        return headers -> {
            String h = headers.get(Auth2Constants.AUTHORIZATION_HEADER);
            if (h == null || !h.regionMatches(true, 0, Auth2Constants.BEARER_PREFIX, 0, Auth2Constants.BEARER_PREFIX.length())) {
                throw CallStatus.UNAUTHENTICATED.withDescription("this prefetch server needs a bearer token: send the header "
                        + "'Authorization: Bearer TOKEN' (PrefetchClient.Builder.token)").toRuntimeException();
            }
            byte[] given = sha256(h.substring(Auth2Constants.BEARER_PREFIX.length()).strip());
            if (!MessageDigest.isEqual(expected, given)) {
                throw CallStatus.UNAUTHENTICATED.withDescription("the bearer token sent was not accepted").toRuntimeException();
            }
            return () -> "bearer";
        };
    }

    /**
     * @param token the token to send ({@link #check}ed)
     * @return client middleware adding {@code Authorization: Bearer TOKEN} to every call
     */
    public static FlightClientMiddleware.Factory client(String token) {
        String value = Auth2Constants.BEARER_PREFIX + check(token);
        return info -> new FlightClientMiddleware() {
            @Override
            public void onBeforeSendingHeaders(CallHeaders outgoing) {
                outgoing.insert(Auth2Constants.AUTHORIZATION_HEADER, value);
            }

            @Override
            public void onHeadersReceived(CallHeaders incoming) {
                // nothing to read back
            }

            @Override
            public void onCallCompleted(CallStatus status) {
                // nothing to clean up
            }
        };
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }
}

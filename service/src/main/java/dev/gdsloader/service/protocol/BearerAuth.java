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
 * The service's bearer-token authentication (service/README.md, "Security"): a shared token ({@link #read}), and/or
 * named per-client tokens ({@link #readNamed}), sent by clients as {@code Authorization: Bearer TOKEN} on every call and
 * checked by Flight's server middleware ({@link CallHeaderAuthenticator}, installed with
 * {@code FlightServer.Builder.headerAuthenticator}). A call without the header, or with a token not in the table, ends
 * UNAUTHENTICATED before the producer sees it; the message names neither the token nor anything of the server. The
 * admitted call's peer identity ({@code CallContext.peerIdentity()}) is the token's name ({@link #SHARED_NAME} for the
 * shared token): the server's log lines and its per-client state use it. Tokens are compared in constant time
 * (SHA-256 of both, {@link MessageDigest#isEqual}, against every entry of the table).
 *
 * <p>A token is 16 to 4096 printable ASCII characters without spaces (e.g. {@code openssl rand -hex 32}); a name is 1
 * to {@value #MAX_NAME_LENGTH} characters of {@code A-Z a-z 0-9 . _ -}. Stateless; thread-safe.
 */
public final class BearerAuth {
    /** The environment variable {@code gdsloader serve} (and {@link #fromEnvironment}) reads a token from. */
    public static final String ENVIRONMENT_VARIABLE = "GDSLOADER_TOKEN";
    /** Fewest characters of a token. */
    public static final int MIN_LENGTH = 16;
    private static final int MAX_LENGTH = 4096;
    /** The peer identity (client name) of a call that sent the shared token ({@code serve --token-file}). */
    public static final String SHARED_NAME = "shared";
    /** Most characters of a token's name. */
    public static final int MAX_NAME_LENGTH = 64;
    private static final java.util.regex.Pattern NAME = java.util.regex.Pattern.compile("[A-Za-z0-9._-]{1," + MAX_NAME_LENGTH + "}");

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
        List<String> lines = lines(file, "token file", "a file whose first line is the token");
        String token = lines.isEmpty() ? "" : lines.getFirst().strip();
        try {
            return check(token);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("token file " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * Reads a file of named per-client tokens ({@code serve --client-tokens FILE}): one {@code name:token} a line, the
     * name 1 to {@value #MAX_NAME_LENGTH} characters of {@code A-Z a-z 0-9 . _ -}, the token as {@link #check} says;
     * white space around a line is ignored, and so are blank lines and lines starting with {@code #}. Names and tokens
     * are each unique in the file.
     *
     * @param file the file (e.g. mode 0600, owned by the server's user)
     * @return name to token, in file order (unmodifiable)
     * @throws IOException naming the file if it cannot be read, or is not a regular file (a directory, a FIFO)
     * @throws IllegalArgumentException naming the file and line (never quoting a token) if a line is not
     *     {@code name:token}, a name is not valid, a token is not valid, a name or a token is listed twice, or the
     *     file has no token
     */
    public static Map<String, String> readNamed(Path file) throws IOException {
        List<String> lines = lines(file, "client tokens file", "one name:token a line");
        Map<String, String> named = new java.util.LinkedHashMap<>();
        Map<String, String> nameOfDigest = new java.util.HashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String at = "client tokens file " + file + " line " + (i + 1) + ": ";
            int colon = line.indexOf(':');
            if (colon < 0) {
                throw new IllegalArgumentException(at + "expected name:token (no ':' on the line)");
            }
            String name = line.substring(0, colon).strip();
            if (!NAME.matcher(name).matches()) {
                throw new IllegalArgumentException(at + "the name before ':' must be 1 to " + MAX_NAME_LENGTH
                        + " characters of A-Z a-z 0-9 . _ - (" + (name.isEmpty() ? "it is empty" : "it is '" + printable(name) + "'") + ")");
            }
            String token;
            try {
                token = check(line.substring(colon + 1).strip());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(at + "the token of '" + name + "': " + e.getMessage(), e);
            }
            if (named.putIfAbsent(name, token) != null) {
                throw new IllegalArgumentException(at + "the name '" + name + "' is listed twice: each client has one name");
            }
            String other = nameOfDigest.putIfAbsent(java.util.HexFormat.of().formatHex(sha256(token)), name);
            if (other != null) {
                throw new IllegalArgumentException(at + "the token of '" + name + "' is also the token of '" + other
                        + "': each client needs its own token, or the server cannot tell them apart");
            }
        }
        if (named.isEmpty()) {
            throw new IllegalArgumentException("client tokens file " + file + " holds no name:token line");
        }
        return java.util.Collections.unmodifiableMap(named);
    }

    /** @return {@code s} with characters that are not printable ASCII as '?', for a message */
    private static String printable(String s) {
        StringBuilder b = new StringBuilder(Math.min(s.length(), MAX_NAME_LENGTH + 1));
        for (int i = 0; i < s.length() && i <= MAX_NAME_LENGTH; i++) {
            char c = s.charAt(i);
            b.append(c < ' ' || c > '~' ? '?' : c);
        }
        return b.toString();
    }

    private static List<String> lines(Path file, String what, String expected) throws IOException {
        if (Files.exists(file) && !Files.isRegularFile(file)) { // a directory, or a FIFO that would block the read
            throw new IOException(what + " " + file + " is not a regular file: expected " + expected);
        }
        try {
            return Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new IOException(what + " " + file + " does not exist", e);
        } catch (java.nio.charset.MalformedInputException e) {
            throw new IllegalArgumentException(what + " " + file + ": not UTF-8 text (a token is printable ASCII)", e);
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
     *     {@value #SHARED_NAME}) and refuses others with UNAUTHENTICATED
     */
    public static CallHeaderAuthenticator authenticator(String token) {
        return authenticator(Map.of(SHARED_NAME, token));
    }

    /**
     * @param tokensByName the tokens the server admits, by client name ({@link #check}ed; names as {@link #readNamed}
     *     allows, or {@value #SHARED_NAME}); at least one
     * @return the authenticator that admits calls carrying {@code Authorization: Bearer TOKEN} for a token of the table,
     *     with that token's name as the call's peer identity, and refuses others with UNAUTHENTICATED; every entry is
     *     compared (constant time in the token, whichever matches)
     * @throws IllegalArgumentException if the table is empty, a token is not valid, or two names share one token
     */
    public static CallHeaderAuthenticator authenticator(Map<String, String> tokensByName) {
        if (tokensByName.isEmpty()) {
            throw new IllegalArgumentException("no bearer token to admit");
        }
        List<String> names = List.copyOf(tokensByName.keySet());
        byte[][] digests = new byte[names.size()][];
        for (int i = 0; i < digests.length; i++) {
            digests[i] = sha256(check(tokensByName.get(names.get(i))));
            for (int j = 0; j < i; j++) {
                if (MessageDigest.isEqual(digests[i], digests[j])) {
                    throw new IllegalArgumentException("the clients '" + names.get(j) + "' and '" + names.get(i)
                            + "' have the same token: each client needs its own");
                }
            }
        }
        return headers -> {
            String h = headers.get(Auth2Constants.AUTHORIZATION_HEADER);
            if (h == null || !h.regionMatches(true, 0, Auth2Constants.BEARER_PREFIX, 0, Auth2Constants.BEARER_PREFIX.length())) {
                throw CallStatus.UNAUTHENTICATED.withDescription("this prefetch server needs a bearer token: send the header "
                        + "'Authorization: Bearer TOKEN' (PrefetchClient.Builder.token)").toRuntimeException();
            }
            byte[] given = sha256(h.substring(Auth2Constants.BEARER_PREFIX.length()).strip());
            int match = -1;
            for (int i = 0; i < digests.length; i++) { // no early exit: the time does not tell which entry matched
                if (MessageDigest.isEqual(digests[i], given)) {
                    match = i;
                }
            }
            if (match < 0) {
                throw CallStatus.UNAUTHENTICATED.withDescription("the bearer token sent was not accepted").toRuntimeException();
            }
            String name = names.get(match);
            return () -> name;
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

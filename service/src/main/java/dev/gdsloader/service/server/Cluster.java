package dev.gdsloader.service.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.apache.arrow.flight.Location;

/**
 * The servers of a multi-server prefetch service, in a fixed order, and which of them this server is: part {@code i}
 * of a dataset is what server {@code i} holds under that dataset's name (service/README.md, "Several machines").
 * Every server of a cluster is started with the same member list (the addresses clients reach them at, e.g.
 * {@code node0:8815,node1:8815}) and its own index; {@code GetFlightInfo} on any of them answers with one endpoint per
 * part, in this order. Immutable; thread-safe.
 *
 * <p>Over TLS ({@link #tls()}, set by {@link PrefetchServer} from its own {@code Builder.tls}) the members' locations
 * are {@code grpc+tls://host:port}: clients and the other members connect to them over TLS and verify the member's
 * certificate for the host named here, so each member's certificate must cover its host (subject alternative name).
 *
 * @param members the servers' addresses as clients reach them, {@code host:port}, in part order (2 or more is usual;
 *     1 is a cluster of one)
 * @param self this server's index in {@code members}
 * @param tls whether the members serve over TLS (every member of a cluster does, or none)
 */
public record Cluster(List<String> members, int self, boolean tls) {
    /**
     * @throws IllegalArgumentException naming the member or index: an empty list, a member that is not
     *     {@code host:port} with a port 1..65535, a member listed twice, or {@code self} outside 0..size-1
     */
    public Cluster {
        members = List.copyOf(Objects.requireNonNull(members, "members"));
        if (members.isEmpty()) {
            throw new IllegalArgumentException("a cluster needs at least one member host:port");
        }
        Set<String> seen = new HashSet<>();
        for (String m : members) {
            port(m);
            if (!seen.add(m)) {
                throw new IllegalArgumentException("cluster member '" + m + "' is listed twice: each server owns one part");
            }
        }
        if (self < 0 || self >= members.size()) {
            throw new IllegalArgumentException("cluster index " + self + " is outside 0.." + (members.size() - 1)
                    + " (the cluster has " + members.size() + " members: " + members + ")");
        }
    }

    /**
     * A cluster whose members serve in plaintext ({@code grpc+tcp}); {@link PrefetchServer} switches it to TLS when it
     * serves over TLS.
     *
     * @param members the servers' addresses, {@code host:port}, in part order
     * @param self this server's index in {@code members}
     * @throws IllegalArgumentException as for the canonical constructor
     */
    public Cluster(List<String> members, int self) {
        this(members, self, false);
    }

    /**
     * @param overTls whether the members serve over TLS
     * @return this cluster with {@link #tls()} set to {@code overTls}
     */
    public Cluster withTls(boolean overTls) {
        return new Cluster(members, self, overTls);
    }

    /**
     * @param csv members separated by commas, {@code host:port,host:port,...} (blanks around them ignored)
     * @param self this server's index, from 0
     * @return the cluster
     * @throws IllegalArgumentException as for the constructor
     */
    public static Cluster parse(String csv, int self) {
        List<String> ms = new ArrayList<>();
        for (String m : csv.split(",", -1)) {
            ms.add(m.strip());
        }
        return new Cluster(ms, self);
    }

    /**
     * Reads a cluster file: one member {@code host:port} per line, in part order; blank lines and lines starting with
     * {@code #} are skipped.
     *
     * @param file the cluster file (the same on every server)
     * @param self this server's index, from 0
     * @return the cluster
     * @throws IOException if the file cannot be read, or is not a regular file (a directory, a FIFO)
     * @throws IllegalArgumentException naming the file and the bad member or index
     */
    public static Cluster read(Path file, int self) throws IOException {
        List<String> ms = new ArrayList<>();
        if (Files.exists(file) && !Files.isRegularFile(file)) { // a directory, or a FIFO that would block the read
            throw new IOException("cluster file " + file + " is not a regular file: expected one host:port a line");
        }
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            String m = line.strip();
            if (!m.isEmpty() && !m.startsWith("#")) {
                ms.add(m);
            }
        }
        try {
            return new Cluster(ms, self);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
        }
    }

    /** @return the number of parts (servers) */
    public int size() {
        return members.size();
    }

    /**
     * @param part a part index, 0..size-1
     * @return the Flight location of the server that owns it, {@code grpc+tcp://host:port}, or {@code grpc+tls://host:port}
     *     if {@link #tls()}
     */
    public Location location(int part) {
        String m = members.get(part);
        int colon = m.lastIndexOf(':');
        String host = m.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        return tls ? Location.forGrpcTls(host, port(m)) : Location.forGrpcInsecure(host, port(m));
    }

    private static int port(String member) {
        int colon = member.lastIndexOf(':');
        if (colon <= 0 || colon == member.length() - 1) {
            throw new IllegalArgumentException("cluster member '" + member + "' is not host:port");
        }
        try {
            int p = Integer.parseInt(member.substring(colon + 1));
            if (p < 1 || p > 65535) {
                throw new NumberFormatException();
            }
            return p;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("cluster member '" + member + "' has no port 1..65535 after its last ':'");
        }
    }
}

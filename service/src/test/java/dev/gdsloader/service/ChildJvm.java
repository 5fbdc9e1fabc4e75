package dev.gdsloader.service;

import java.io.File;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * Runs {@link IpcChild} in a child JVM (CUDA IPC handles cannot be opened in the process that made them) on
 * this JVM's class path, and collects its exit status and output.
 */
public final class ChildJvm {
    /**
     * @param exitValue exit status, or -1 if it was killed at the timeout
     * @param stdout its standard output, by line
     * @param stderr its standard error
     */
    public record Result(int exitValue, List<String> stdout, String stderr) {
    }

    private ChildJvm() {
    }

    /**
     * @param dir where its output files go
     * @param timeoutSeconds how long it may run before it is killed
     * @param args {@link IpcChild}'s arguments
     * @return how it ended
     * @throws Exception if it cannot be started or its output read
     */
    public static Result runIpcChild(Path dir, long timeoutSeconds, String... args) throws Exception {
        Path out = Files.createTempFile(dir, "child", ".out");
        Path err = Files.createTempFile(dir, "child", ".err");
        Process p = command(IpcChild.class, List.of(), args).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        int exit = -1;
        if (p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            exit = p.exitValue();
        } else {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        return new Result(exit, Files.readAllLines(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
    }

    /**
     * @param main the class whose {@code main} the child runs
     * @param jvmOptions JVM options after the project's flags (e.g. {@code -Xmx64m})
     * @param args the child's arguments
     * @return a process builder for a child JVM with the project's JVM flags and this JVM's class path
     * @throws Exception if the class path cannot be read
     */
    public static ProcessBuilder command(Class<?> main, List<String> jvmOptions, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "@" + Objects.requireNonNull(System.getProperty("gds.jvm.flags"),
                        "system property gds.jvm.flags: bin/jvm-flags (the root pom sets it)")));
        cmd.addAll(jvmOptions);
        cmd.addAll(List.of("-cp", classPath(), main.getName()));
        cmd.addAll(List.of(args));
        return new ProcessBuilder(cmd);
    }

    /**
     * The child needs the test classes and their dependencies: this JVM's class path (under surefire, a manifest
     * jar) plus what URL class loaders above this class add (the JUnit console launcher's {@code --class-path},
     * as benchmarks/device/gpu-tests.sh runs it).
     */
    public static String classPath() throws Exception {
        LinkedHashSet<String> entries = new LinkedHashSet<>();
        for (ClassLoader l = IpcChild.class.getClassLoader(); l != null; l = l.getParent()) {
            if (l instanceof URLClassLoader u) {
                for (URL url : u.getURLs()) {
                    entries.add(Path.of(url.toURI()).toString());
                }
            }
        }
        entries.addAll(List.of(System.getProperty("java.class.path").split(File.pathSeparator)));
        return String.join(File.pathSeparator, entries);
    }
}

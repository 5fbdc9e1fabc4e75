package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.npy.NpyWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The launcher under {@code LANG=C}: Java would decode file names as ASCII (sun.jnu.encoding follows the locale)
 * and turn {@code dätä-ünï} into {@code d??t??-??n??}; ./gdsloader sources bin/utf8-locale.sh, which runs java under
 * a UTF-8 locale. The child runs the launcher's java command (the cli jar is not built when tests run) after
 * sourcing that file under LANG=C, on a dataset whose directory and shard names are not ASCII. The names are made
 * by the shell from octal escapes, so this test works whatever this JVM's own locale is.
 */
class LauncherLocaleTest {
    @TempDir
    Path dir;

    @Test
    void underLangCTheLauncherFindsADatasetWithNonAsciiDirectoryAndShardNames() throws Exception {
        Path root = JvmFlagsTest.repositoryRoot();
        String launcher = Files.readString(root.resolve("gdsloader"), StandardCharsets.UTF_8);
        assertTrue(launcher.contains("source \"$root/bin/utf8-locale.sh\""), "./gdsloader sources bin/utf8-locale.sh");
        Files.createDirectories(dir.resolve("ascii"));
        NpyWriter.write(dir.resolve("ascii/data-00000.npy"), DType.UINT8, new long[] {5, 3}, new byte[15]);
        Path script = dir.resolve("run.sh");
        Files.writeString(script, """
                set -eu
                n=$(printf 'd\\303\\244t\\303\\244')
                d="$1/$n-$(printf '\\303\\274n\\303\\257')"
                mkdir "$d"
                cp "$1/ascii/data-00000.npy" "$d/$n-00000.npy"
                . "$2"
                exec "$3" "@$4" -cp "$5" dev.gdsloader.cli.GdsLoaderMain checksum "$d"
                """, StandardCharsets.US_ASCII);
        ProcessBuilder pb = new ProcessBuilder(List.of("bash", script.toString(), dir.toString(),
                root.resolve("bin/utf8-locale.sh").toString(), Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                Objects.requireNonNull(System.getProperty("gds.jvm.flags"), "system property gds.jvm.flags"),
                System.getProperty("java.class.path")));
        Map<String, String> env = pb.environment();
        env.keySet().removeIf(k -> k.startsWith("LC_") || k.equals("LANGUAGE"));
        env.put("LANG", "C");
        Path out = dir.resolve("out.txt");
        Path err = dir.resolve("err.txt");
        Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("the launcher's java did not exit");
        }
        String stdout = Files.readString(out, StandardCharsets.UTF_8);
        String stderr = Files.readString(err, StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), stdout + stderr);
        assertTrue(stdout.contains("d\u00e4t\u00e4\t") && stdout.contains("/d\u00e4t\u00e4-\u00fcn\u00ef\t")
                && stdout.contains("5 records"), "column dätä of dataset dätä-ünï, 5 records: " + stdout + stderr);
    }
}

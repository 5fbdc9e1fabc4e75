package dev.gdsloader.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import picocli.CommandLine;

/**
 * Runs one picocli command in this JVM, capturing what it prints to {@code System.out} and to picocli's
 * streams.
 *
 * @param exitCode the command's exit code
 * @param out everything printed to standard output
 * @param err everything picocli printed to its error stream
 */
record CommandRun(int exitCode, String out, String err) {

    static synchronized CommandRun execute(Object command, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream savedOut = System.out;
        PrintStream outStream = new PrintStream(out, true, StandardCharsets.UTF_8);
        int code;
        System.setOut(outStream);
        try {
            CommandLine cl = GdsLoaderMain.configure(new CommandLine(command)); // as the real main
            cl.setOut(new PrintWriter(outStream, true, StandardCharsets.UTF_8));
            cl.setErr(new PrintWriter(new PrintStream(err, true, StandardCharsets.UTF_8), true, StandardCharsets.UTF_8));
            code = cl.execute(args);
        } finally {
            System.out.flush();
            System.setOut(savedOut);
        }
        return new CommandRun(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Override
    public String toString() {
        return "exit " + exitCode + "\n--- out ---\n" + out + "--- err ---\n" + err;
    }
}

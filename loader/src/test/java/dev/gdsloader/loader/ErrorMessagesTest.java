package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link ErrorMessages} on what the file system really throws. */
class ErrorMessagesTest {
    @TempDir
    Path dir;

    @Test
    void aSymbolicLinkLoopIsNamedALoopNotTheRawOsText() throws Exception {
        Path loop = Files.createSymbolicLink(dir.resolve("loop"), Path.of("loop"));
        FileSystemException e = assertThrows(FileSystemException.class, () -> Files.readAttributes(loop, BasicFileAttributes.class));
        assertEquals(loop + ": a symbolic link loop (too many levels of symbolic links)", ErrorMessages.of(e));
    }

    @Test
    void twoLinksToEachOtherInADirectoryOfThePathAreALoopAndAPlainFailureIsNot() throws Exception {
        Files.createSymbolicLink(dir.resolve("a"), Path.of("b"));
        Files.createSymbolicLink(dir.resolve("b"), Path.of("a"));
        Path inside = dir.resolve("a").resolve("x");
        FileSystemException e = assertThrows(FileSystemException.class, () -> Files.readAttributes(inside, BasicFileAttributes.class));
        assertEquals(inside + ": a symbolic link loop (too many levels of symbolic links)", ErrorMessages.of(e));
        Files.createDirectory(dir.resolve("d"));
        Files.createSymbolicLink(dir.resolve("up"), Path.of("d/.."));
        FileSystemException other = new FileSystemException(dir.resolve("up").resolve("d").toString(), null, "Input/output error");
        assertEquals(other.getMessage(), ErrorMessages.of(other), "a link that resolves is not a loop");
    }

    @Test
    void aMissingFileIsNamedWithItsReason() {
        Path missing = dir.resolve("missing");
        var e = assertThrows(java.nio.file.NoSuchFileException.class, () -> Files.readAttributes(missing, BasicFileAttributes.class));
        assertEquals(missing + ": no such file or directory", ErrorMessages.of(e));
    }
}

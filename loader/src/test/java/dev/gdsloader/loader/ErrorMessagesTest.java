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
    void aMissingFileIsNamedWithItsReason() {
        Path missing = dir.resolve("missing");
        var e = assertThrows(java.nio.file.NoSuchFileException.class, () -> Files.readAttributes(missing, BasicFileAttributes.class));
        assertEquals(missing + ": no such file or directory", ErrorMessages.of(e));
    }
}

package dev.gdsloader.cufile;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Explains the most common causes of {@code CU_FILE_HANDLE_NOT_REGISTERED (5027)}: libcufile classifies
 * the block device under a file through udev's database ({@code /run/udev/data/bMAJOR:MINOR}, key
 * {@code ID_FS_USAGE}); containers and VMs without udev have no such record, and cuFile logs
 * "udev property not found: ID_FS_USAGE". Files on filesystems without a block device (tmpfs,
 * device major 0) have no record at all.
 */
final class UdevRecords {
    private UdevRecords() {
    }

    /**
     * @param file a file on the filesystem that failed to register
     * @return one sentence naming the udev record that is missing (or present)
     */
    static String explain(Path file) {
        long dev;
        try {
            dev = ((Number) Files.getAttribute(file, "unix:dev")).longValue();
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return "cuFile could not classify the file's block device (udev records unreadable: " + e.getMessage() + ")";
        }
        // Linux dev_t encoding (glibc gnu_dev_major / gnu_dev_minor)
        long major = ((dev >>> 8) & 0xfff) | ((dev >>> 32) & ~0xfffL);
        long minor = (dev & 0xff) | ((dev >>> 12) & ~0xffL);
        if (major == 0) {
            return "the file is on a " + fileSystemType(file) + " filesystem, which has no block device (device "
                    + major + ":" + minor + ") for cuFile to classify";
        }
        Path record = Path.of("/run/udev/data", "b" + major + ":" + minor);
        try {
            if (!Files.exists(record)) {
                return "udev has no record of the disk holding this file (" + record + " is missing, so cuFile cannot read ID_FS_USAGE): typical of VMs and containers without udev";
            }
            if (!Files.readString(record).contains("ID_FS_USAGE")) {
                return "udev's record of the disk (" + record + ") has no ID_FS_USAGE property";
            }
        } catch (IOException e) {
            return "udev record " + record + " unreadable: " + e.getMessage();
        }
        return "udev has a record of the disk (" + record + "), so the cause is elsewhere: see the cuFile log";
    }

    private static String fileSystemType(Path file) {
        try {
            return Files.getFileStore(file).type();
        } catch (IOException e) {
            return "virtual";
        }
    }
}

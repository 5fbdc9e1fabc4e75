package dev.gdsloader.formats.idx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class IdxFileNameTest {

    @ParameterizedTest
    @CsvSource({
        "train-images-idx3-ubyte.gz, train, images",
        "train-labels-idx1-ubyte.gz, train, labels",
        "t10k-images-idx3-ubyte.gz, test, images",
        "t10k-labels-idx1-ubyte, test, labels",
        "train-images.idx3-ubyte, train, images",
        "TRAIN-labels-idx1-ubyte.GZ, TRAIN, labels",
        "emnist-letters-train-images-idx3-ubyte.gz, emnist, letters-train-images",
        "digits.gz, digits, data",
        "digits, digits, data",
        "x-idx2-ubyte, x, data"})
    void splitAndColumn(String fileName, String split, String column) {
        IdxFileName n = IdxFileName.parse(fileName);
        assertEquals(split, n.split());
        assertEquals(column, n.column());
    }

    @ParameterizedTest
    @ValueSource(strings = {"-images-idx3-ubyte.gz", "train-", ".gz"})
    void emptyPartsRefused(String fileName) {
        assertThrows(IllegalArgumentException.class, () -> IdxFileName.parse(fileName));
    }
}

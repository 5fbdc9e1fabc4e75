package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * Every range a command declares (a static {@link Checks.Range} field of the command or of a mixin it holds) is one its
 * {@link RangedOptions#ranges()} lists, so that the usage message for a value past the option's Java type names it:
 * a range added to a command without listing it fails here, not in a user's terminal.
 */
class RangedOptionsTest {
    @Test
    void everyDeclaredRangeIsListedByItsCommand() throws ReflectiveOperationException {
        CommandLine root = GdsLoaderMain.configure(new CommandLine(GdsLoaderMain.class));
        List<String> unlisted = new ArrayList<>();
        int commands = 0;
        for (CommandLine c : all(root)) {
            Object command = c.getCommand();
            Set<Checks.Range> declared = declared(command);
            if (declared.isEmpty()) {
                continue;
            }
            commands++;
            assertTrue(command instanceof RangedOptions, command.getClass().getSimpleName() + " declares " + declared
                    + " but is not RangedOptions");
            List<Checks.Range> listed = ((RangedOptions) command).ranges();
            for (Checks.Range r : declared) {
                if (!listed.contains(r)) {
                    unlisted.add(command.getClass().getSimpleName() + ": " + r.option());
                }
            }
            assertEquals(listed.size(), listed.stream().map(Checks.Range::option).distinct().count(),
                    "one range per option: " + listed);
        }
        assertTrue(commands >= 8, "commands with declared ranges: " + commands);
        assertEquals(List.of(), unlisted, "declared but not listed by ranges()");
    }

    private static List<CommandLine> all(CommandLine c) {
        List<CommandLine> all = new ArrayList<>(List.of(c));
        c.getSubcommands().values().stream().distinct().forEach(s -> all.addAll(all(s)));
        return all;
    }

    /** The static Range fields of the command's class and of the classes of its fields in this package (mixins). */
    private static Set<Checks.Range> declared(Object command) throws ReflectiveOperationException {
        List<Class<?>> classes = new ArrayList<>(List.of(command.getClass()));
        for (Field f : command.getClass().getDeclaredFields()) {
            if (f.getType().getPackageName().equals(Checks.class.getPackageName()) && f.getType() != Checks.Range.class) {
                classes.add(f.getType());
            }
        }
        Set<Checks.Range> ranges = new LinkedHashSet<>();
        for (Class<?> k : classes) {
            for (Field f : k.getDeclaredFields()) {
                if (f.getType() == Checks.Range.class && Modifier.isStatic(f.getModifiers())) {
                    f.setAccessible(true);
                    ranges.add((Checks.Range) f.get(null));
                }
            }
        }
        return ranges;
    }
}

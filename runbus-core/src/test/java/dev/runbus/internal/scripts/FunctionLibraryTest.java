package dev.runbus.internal.scripts;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The function library is generated from every script file, and its names change with its code. */
class FunctionLibraryTest {

    @Test
    void theLibraryHoldsEveryScriptOfTheResourceFolder() throws IOException {
        List<String> files;
        try (Stream<Path> lua = Files.list(Path.of("src/main/resources/dev/runbus/lua"))) {
            files = lua.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".lua"))
                    .map(n -> n.substring(0, n.length() - ".lua".length())).sorted().toList();
        }
        assertThat(FunctionLibrary.SCRIPTS).containsExactlyElementsOf(files);
        String code = FunctionLibrary.runbus().code();
        for (String script : files) {
            assertThat(code).contains("function_name='" + FunctionLibrary.runbus().function(script) + "'");
            assertThat(code).contains(LuaScript.load(script).source());
        }
    }

    @Test
    void everyNameCarriesAHashOfTheCode_soTwoVersionsLoadSideBySide() {
        FunctionLibrary one = FunctionLibrary.of(List.of(LuaScript.of("step", "return 1")));
        FunctionLibrary same = FunctionLibrary.of(List.of(LuaScript.of("step", "return 1")));
        FunctionLibrary changed = FunctionLibrary.of(List.of(LuaScript.of("step", "return 2")));

        assertThat(one.name()).matches("runbus_[0-9a-f]{12}").isEqualTo(same.name()).isNotEqualTo(changed.name());
        assertThat(one.function("step")).isEqualTo(one.name() + "_step");
        assertThat(one.code()).startsWith("#!lua name=" + one.name() + "\n")
                .contains("redis.register_function{function_name='" + one.name()
                        + "_step', callback=function(KEYS, ARGV)\nreturn 1\nend}")
                .contains("function_name='" + one.name() + "_" + FunctionLibrary.PROBE + "', flags={'no-writes'}");
    }

    @Test
    void theScriptsThatOnlyAckClaimRemoveOrTrimMayRunUnderMaxmemory_andTheListOnlyReads() {
        String code = FunctionLibrary.runbus().code();
        String name = FunctionLibrary.runbus().name();
        for (String script : List.of("ack", "retention", "reclaim", "keep_alive", "ordered_ack", "trim_by_age")) {
            assertThat(code).contains("function_name='" + name + "_" + script + "', flags={'allow-oom'}, callback=");
        }
        assertThat(code).contains("function_name='" + name + "_scheduled_list', flags={'no-writes'}, callback=");
        for (String script : List.of("schedule", "dead_letter", "move_due", "record_starts", "partition_count")) {
            assertThat(code).contains("function_name='" + name + "_" + script + "', callback=");
        }
        assertThat(FunctionLibrary.SCRIPTS).containsAll(FunctionLibrary.FLAGS.keySet());
    }

    @Test
    void aScriptEndingInACommentStillClosesItsFunction() {
        FunctionLibrary lib = FunctionLibrary.of(List.of(LuaScript.of("x", "return 1 -- done")));
        assertThat(lib.code()).contains("return 1 -- done\nend}");
    }
}

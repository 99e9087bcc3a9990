package dev.runbus;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import dev.runbus.testkit.ApiSurface;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The layout rules of runbus-core (docs/architecture.md, "Packages"), checked on the compiled classes. Each rule
 * fails naming the class and the dependency that breaks it.
 */
class ArchitectureTest {

    private static JavaClasses classes;

    @BeforeAll
    static void importClasses() {
        classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.runbus");
    }

    @Test
    void thePublicApiUsesNoRedisClientType() {
        ArchRule rule = noClasses().that().resideInAPackage("dev.runbus")
                .should().dependOnClassesThat().resideInAPackage("io.lettuce..")
                .because("the public API is free of the Redis client: users never see Lettuce through it");
        rule.check(classes);
    }

    @Test
    void thePublicApiShowsNoInternalTypeInItsSignatures() {
        ApiSurface.publicSignaturesOf("dev.runbus", "dev.runbus.internal..", "io.lettuce..").check(classes);
    }

    @Test
    void theInternalPackagesAreFreeOfCycles() {
        slices().matching("dev.runbus.internal.(*)..").should().beFreeOfCycles().check(classes);
    }

    @Test
    void nothingBelowTheCompositionRootRefersBackToIt() {
        noClasses().that().resideInAPackage("dev.runbus.internal.*..")
                .should().dependOnClassesThat().resideInAPackage("dev.runbus.internal")
                .because("RedisBus composes the internals; what they need from it comes in BusServices")
                .check(classes);
    }

    @Test
    void theRedisLevelDependsOnNoOtherInternalPackage() {
        noClasses().that().resideInAPackage("dev.runbus.internal.redis..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.runbus.internal",
                        "dev.runbus.internal.scripts..", "dev.runbus.internal.telemetry..",
                        "dev.runbus.internal.registry..", "dev.runbus.internal.consume..",
                        "dev.runbus.internal.ordered..", "dev.runbus.internal.delay..",
                        "dev.runbus.internal.deadletter..", "dev.runbus.internal.admin..",
                        "dev.runbus.internal.flow..")
                .because("internal.redis is the bottom layer: the connection, the wire format, keys and slots")
                .check(classes);
    }

    @Test
    void theScriptsDependOnTheRedisLevelAlone() {
        noClasses().that().resideInAPackage("dev.runbus.internal.scripts..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.runbus.internal",
                        "dev.runbus.internal.telemetry..", "dev.runbus.internal.registry..",
                        "dev.runbus.internal.consume..", "dev.runbus.internal.ordered..",
                        "dev.runbus.internal.delay..", "dev.runbus.internal.deadletter..",
                        "dev.runbus.internal.admin..", "dev.runbus.internal.flow..")
                .check(classes);
    }
}

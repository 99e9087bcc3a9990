package dev.runbus.examples;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** The examples are what a user writes: the public APIs alone. */
class ArchitectureTest {

    @Test
    void theExamplesUseNoInternals() {
        noClasses().that().resideInAPackage("dev.runbus.examples..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.runbus.internal..", "dev.runbus.runs.internal..")
                .check(new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                        .importPackages("dev.runbus.examples"));
    }
}

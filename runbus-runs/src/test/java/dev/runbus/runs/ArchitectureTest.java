package dev.runbus.runs;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.runbus.testkit.ApiSurface;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The layout rules of runbus-runs (docs/architecture.md, "Packages"), checked on the compiled classes. */
class ArchitectureTest {

    private static JavaClasses classes;

    @BeforeAll
    static void importClasses() {
        classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.runbus.runs");
    }

    @Test
    void theRunsLayerUsesOnlyThePublicApiOfTheBus() {
        noClasses().that().resideInAPackage("dev.runbus.runs..")
                .should().dependOnClassesThat().resideInAPackage("dev.runbus.internal..")
                .because("the runs layer is a user of the bus like any other (docs/architecture.md)")
                .check(classes);
    }

    @Test
    void theInternalPackagesAreFreeOfCycles() {
        slices().matching("dev.runbus.runs.internal.(*)..").should().beFreeOfCycles().check(classes);
    }

    @Test
    void theStoreIsTheBottomLayer() {
        noClasses().that().resideInAPackage("dev.runbus.runs.internal.store..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.runbus.runs.internal.worker..",
                        "dev.runbus.runs.internal.sweep..", "dev.runbus.runs.internal.meters..")
                .because("the SQL knows nothing of who runs it")
                .check(classes);
    }

    @Test
    void thePublicApiShowsNoInternalTypeInItsSignatures() {
        ApiSurface.publicSignaturesOf("dev.runbus.runs", "dev.runbus.runs.internal..", "dev.runbus.internal..")
                .check(classes);
    }
}

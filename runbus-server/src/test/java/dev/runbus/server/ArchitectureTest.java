package dev.runbus.server;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The server uses the public APIs of the bus and the runs layer only, never their internals (docs/architecture.md, Packages). */
class ArchitectureTest {

    private static JavaClasses classes;

    @BeforeAll
    static void importClasses() {
        classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.runbus.server");
    }

    @Test
    void theServerUsesNoInternals() {
        noClasses().that().resideInAPackage("dev.runbus.server..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.runbus.internal..", "dev.runbus.runs.internal..")
                .because("the server is built on the public APIs, which is what keeps them sufficient")
                .check(classes);
    }

    @Test
    void theApiKnowsNothingOfTheDashboard() {
        noClasses().that().resideInAPackage("dev.runbus.server.http..")
                .should().dependOnClassesThat().resideInAPackage("dev.runbus.server.web..")
                .because("the dashboard is built on the API's access layer and handed to it as routes")
                .check(classes);
    }

    @Test
    void theEmbeddedServersAndTheDemoStandApart() {
        noClasses().that().resideInAPackage("dev.runbus.server.embedded..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.runbus.server", "dev.runbus.server.cli..",
                        "dev.runbus.server.http..", "dev.runbus.server.web..", "dev.runbus.server.demo..")
                .because("starting a Redis or a PostgreSQL needs nothing of the server")
                .check(classes);
    }
}

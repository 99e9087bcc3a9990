package dev.runbus.spring;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/** The `runbus` health indicator on Spring Boot 4 (Actuator's health types are in org.springframework.boot.health.contributor there). */
public class RunbusHealthIndicator extends AbstractHealthIndicator {

    private final RunbusHealthCheck check;

    public RunbusHealthIndicator(RunbusHealthCheck check) {
        super("runbus health check failed");
        this.check = check;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        RunbusHealthCheck.Report report = check.check();
        (report.up() ? builder.up() : builder.down()).withDetails(report.details());
    }
}

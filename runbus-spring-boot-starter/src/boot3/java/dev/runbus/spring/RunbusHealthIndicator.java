package dev.runbus.spring;

import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/** The `runbus` health indicator on Spring Boot 3 (Actuator's health types are in org.springframework.boot.actuate.health there). */
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

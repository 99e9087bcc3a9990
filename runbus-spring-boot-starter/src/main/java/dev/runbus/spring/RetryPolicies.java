package dev.runbus.spring;

import dev.runbus.RetryPolicy;

/** The {@link RetryPolicy} a {@code …retry.*} group of properties names. */
final class RetryPolicies {

    private RetryPolicies() {
    }

    static RetryPolicy of(RunbusProperties.Retry retry) {
        return switch (retry.getPolicy()) {
            case ON_IDLE -> RetryPolicy.onIdle();
            case FIXED -> RetryPolicy.fixed(retry.getDelay());
            case EXPONENTIAL -> RetryPolicy.exponential(retry.getDelay(), retry.getMultiplier(), retry.getMaxDelay(),
                    retry.getJitter());
        };
    }
}

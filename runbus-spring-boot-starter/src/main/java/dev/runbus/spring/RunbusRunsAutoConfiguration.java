package dev.runbus.spring;

import dev.runbus.Bus;
import dev.runbus.runs.RunHandler;
import dev.runbus.runs.Runs;
import dev.runbus.runs.RunsConfig;
import javax.sql.DataSource;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * The runs layer, when {@code runbus.runs.enabled=true}, runbus-runs is on the classpath and the application has a
 * DataSource; and its worker, when the application defines a {@link RunHandler} bean. The runs layer is made after
 * the application's database initializers (Flyway, Liquibase, SQL scripts): with {@code runbus.runs.migrate=false}
 * it checks a schema that one of them builds.
 */
@AutoConfiguration(after = RunbusAutoConfiguration.class, afterName = {
        "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration"})
@ConditionalOnClass(Runs.class)
@ConditionalOnProperty(prefix = "runbus.runs", name = "enabled", havingValue = "true")
@ConditionalOnBean({Bus.class, DataSource.class})
public class RunbusRunsAutoConfiguration {

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    @DependsOnDatabaseInitialization
    public Runs runbusRuns(Bus bus, DataSource dataSource, RunbusProperties properties, Environment env,
                           BeanFactory beans) {
        Object registry = ClassUtils.isPresent("io.micrometer.core.instrument.MeterRegistry",
                RunbusRunsAutoConfiguration.class.getClassLoader()) ? MeterRegistryLookup.find(beans) : null;
        RunsConfig config = RunsConfigFactory.of(properties.getRuns(), ConsumerName.of(properties, env), registry);
        return Runs.create(bus, dataSource, config);
    }

    /**
     * Submitting runs in the Spring-managed transaction, when spring-jdbc is on the class path. A method of this
     * class, not a nested configuration: a nested one is registered even when this class's conditions leave the runs
     * layer out, and then finds no {@link Runs} to use.
     */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnClass(name = "org.springframework.jdbc.datasource.DataSourceUtils")
    public TransactionalRuns runbusTransactionalRuns(Runs runs, DataSource dataSource) {
        return new TransactionalRuns(runs, dataSource);
    }

    @Bean
    @ConditionalOnBean(RunHandler.class)
    public RunsWorkerLifecycle runbusRunsWorker(Runs runs, ObjectProvider<RunHandler> handler,
                                                RunbusProperties properties) {
        return new RunsWorkerLifecycle(runs, handler::getObject, properties.getRuns().isSweeper(),
                properties.getRuns().isScheduler());
    }
}

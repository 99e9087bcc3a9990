package dev.runbus.server.cli;

import dev.runbus.server.Environment;
import dev.runbus.server.Settings;
import dev.runbus.server.logging.JsonLogs;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The command tree and how errors become exit codes and messages. */
@Command(name = "runbus", mixinStandardHelpOptions = true, versionProvider = Commands.Version.class,
        description = "A reliable message bus on Redis Streams with PostgreSQL as the source of truth.",
        subcommands = {DemoCommand.class, DevCommand.class, ServeCommand.class, WorkerCommand.class, ConfigCommand.class,
                PendingCommand.class, DlqCommand.class, ConsumersCommand.class, StatsCommand.class,
                PartitionsCommand.class, ScheduledCommand.class, SchedulesCommand.class, FlowCommand.class,
                GroupsCommand.class, RunsCommand.class, MigrateCommand.class, TokenCommand.class,
                CommandLine.HelpCommand.class})
public final class Commands implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** What the subcommands read besides their arguments; see {@link BaseCommand#environment()}. */
    private final Environment environment;

    private Commands(Environment environment) {
        this.environment = environment;
    }

    Environment environment() {
        return environment;
    }

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing command: try 'runbus demo' or 'runbus --help'");
    }

    /** The command reading this process's environment variables and working directory. */
    public static CommandLine commandLine() {
        return commandLine(Environment.system());
    }

    /** The command reading only the given environment (tests pass an empty one). */
    public static CommandLine commandLine(Environment environment) {
        CommandLine cl = new CommandLine(new Commands(environment));
        DemoCommand.adjustHelp(cl.getSubcommands().get("demo").getCommandSpec());
        if (JsonLogs.active()) {
            cl.setErr(JsonLogs.commandOutput()); // --log-format json: what the command says on stderr is JSON too
        }
        // Every message is masked on its way out: a library's error may quote a URL with its password.
        cl.setExecutionExceptionHandler((e, cmd, parsed) -> {
            Throwable root = e;
            if (e instanceof IllegalArgumentException) {
                cmd.getErr().println("runbus: " + Settings.mask(e.getMessage()));
                return 2;
            }
            while (root.getCause() != null && root.getMessage() == null) {
                root = root.getCause();
            }
            cmd.getErr().println("runbus: error: " + Settings.mask(root.getMessage()));
            return 1;
        });
        return cl;
    }

    /** The version from the jar's manifest, or "development" when run from classes. */
    public static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = Commands.class.getPackage().getImplementationVersion();
            return new String[] {"runbus " + (v == null ? "0.1.0-SNAPSHOT (development build)" : v)};
        }
    }
}

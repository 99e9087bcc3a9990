package dev.runbus.server.cli;

import dev.runbus.server.http.ApiToken;
import dev.runbus.server.http.ApiTokens;
import dev.runbus.server.http.Scope;
import java.security.SecureRandom;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "token", mixinStandardHelpOptions = true, description = "API tokens for serve.",
        subcommands = TokenCommand.Create.class)
final class TokenCommand implements Runnable {

    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new picocli.CommandLine.ParameterException(spec.commandLine(), "missing subcommand: try 'runbus token"
                + " create --name NAME --scopes submit,read'");
    }

    @Command(name = "create", mixinStandardHelpOptions = true,
            description = {"Make a new token: prints the token (shown this once; runbus keeps only its hash) and the "
                    + "line to add to the --api-tokens-file of serve.",
                    "Scopes: submit (POST /v1/runs), read (runs, events, streams, partitions, dead letters, "
                            + "scheduled entries, metrics), admin (replay and purge dead letters, cancel runs "
                            + "and scheduled entries)."})
    static final class Create implements Callable<Integer> {

        @Spec
        CommandSpec spec;

        @Option(names = "--name", required = true, paramLabel = "NAME",
                description = "what the token is for, unique in the file: shown in logs and used for its limits")
        String name;

        @Option(names = "--scopes", required = true, paramLabel = "SCOPE[,SCOPE]",
                description = "what it may do: submit, read, admin, comma-separated")
        String scopes;

        @Override
        public Integer call() {
            String token = ApiTokens.generate(new SecureRandom());
            ApiToken entry = new ApiToken(name, Scope.parseList(scopes), ApiTokens.sha256(token));
            // Checked the way serve reads it, so that a line printed here is a line serve accepts.
            ApiTokens.parse(java.util.List.of(entry.line()), "--name/--scopes");
            var out = spec.commandLine().getOut();
            out.println("token: " + token);
            out.println("line:  " + entry.line());
            out.println("Keep the token secret: it is shown this once. Add the line to the file serve reads with"
                    + " --api-tokens-file, then restart serve. Clients send: Authorization: Bearer <token>");
            out.flush();
            return 0;
        }
    }
}

package dev.runbus.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.runbus.server.Environment;
import dev.runbus.server.RunbusServer;
import dev.runbus.server.Setting;
import dev.runbus.server.Settings;
import dev.runbus.server.TestServe;
import dev.runbus.server.http.HttpApi;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * deploy/kubernetes/ says what the program does: every container's arguments are a command line the {@code runbus}
 * command takes (parsed by its own picocli tree and resolved by its own settings, with the container's environment),
 * its probes name routes a running {@code serve} answers without a token on the port it listens on, its grace period
 * outlasts the stop its shutdown and Redis timeouts allow, it runs as a user that is not root, its files come from
 * the Secrets docs/kubernetes.md creates, and the image the Jib profile builds has the port and user the manifests
 * expect.
 */
class KubernetesManifestsTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Path MANIFESTS = ROOT.resolve("deploy/kubernetes");
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    /** The settings every process of one deployment must agree on (docs/cli.md: the same in every process). */
    private static final List<Setting> SHARED = List.of(Setting.KEY_PREFIX, Setting.SCHEMA, Setting.TOPIC,
            Setting.GROUP, Setting.PARTITIONS, Setting.ORDERED, Setting.REDIS_SCRIPTS);
    /** Settings whose value names a file the process reads. */
    private static final List<Setting> FILES = List.of(Setting.REDIS_PASSWORD_FILE, Setting.DATABASE_PASSWORD_FILE,
            Setting.REDIS_TLS_CA, Setting.TLS_CERT, Setting.TLS_KEY, Setting.API_TOKENS_FILE);
    /** Where the image keeps a deployment's own handler jars (docs/kubernetes.md, "Your handler in the image"). */
    private static final String HANDLERS = "/app/handlers/";

    /** Every document of every manifest, with the file it came from. */
    private static final List<Doc> DOCS = new ArrayList<>();
    /** Every container of the workloads among them, resolved once. */
    private static final List<Container> CONTAINERS = new ArrayList<>();

    @TempDir
    static Path scratch;

    record Doc(String file, JsonNode node) {
        String kind() {
            return node.path("kind").asText();
        }

        String name() {
            return file + " " + kind() + " " + node.path("metadata").path("name").asText();
        }
    }

    /** One container of a workload, with its command resolved as the {@code runbus} command resolves it. */
    record Container(Doc workload, JsonNode pod, JsonNode spec, String command, Settings settings) {
        String name() {
            return workload.name() + " (" + command + ")";
        }
    }

    @BeforeAll
    static void load() throws IOException {
        try (Stream<Path> files = Files.list(MANIFESTS)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList()) {
                try (MappingIterator<JsonNode> it = YAML.readerFor(JsonNode.class).readValues(f.toFile())) {
                    while (it.hasNext()) {
                        JsonNode n = it.next();
                        if (n != null && !n.isMissingNode() && !n.isNull()) {
                            DOCS.add(new Doc(f.getFileName().toString(), n));
                        }
                    }
                }
            }
        }
        assertThat(DOCS).as("manifests in deploy/kubernetes").isNotEmpty();
        for (Doc d : DOCS) {
            JsonNode pod = d.node().path("spec").path("template").path("spec");
            for (JsonNode spec : pod.path("containers")) {
                CONTAINERS.add(resolve(d, pod, spec));
            }
        }
    }

    @Test
    void everyDocumentIsAKindTheDocsExplain() {
        for (Doc d : DOCS) {
            assertThat(d.kind()).as(d.name()).isIn("Deployment", "Job", "Service");
            assertThat(d.node().path("metadata").path("name").asText()).as(d.name()).isNotEmpty();
        }
        assertThat(containers()).extracting(Container::command).containsExactlyInAnyOrder("migrate", "serve", "worker");
    }

    /**
     * The arguments are the image's entrypoint's (the container sets no {@code command}) and a command line of the
     * runbus command: picocli refuses an unknown command or option, the settings pass the checks serve and worker make
     * before they start, and a RUNBUS_ variable is a setting's.
     */
    @Test
    void everyContainerRunsARealCommandWithRealOptions() {
        for (Container c : containers()) {
            assertThat(c.spec().has("command")).as("%s sets no command: the image's java entrypoint runs", c.name())
                    .isFalse();
            Settings checked = c.settings().with(placeholderFiles(c));
            checked.validate();
            if (!c.command().equals("migrate")) {
                RunbusServer.checkHandler(checked);
                assertThat(checked.isSet(Setting.REDIS_URL) && checked.isSet(Setting.DATABASE_URL))
                        .as("%s is given its servers (no embedded ones)", c.name()).isTrue();
            }
            if (c.command().equals("serve")) {
                HttpApi.Access access = HttpApi.check(checked);
                assertThat(access.tokens().isEmpty()).as("%s has API tokens", c.name()).isFalse();
                assertThat(access.insecure()).as("%s without --insecure-no-auth", c.name()).isFalse();
            }
            assertThat(c.settings().configFile()).as("%s reads no config file the test cannot see", c.name()).isNull();
        }
    }

    /** The schema is the Job's to change: serve and worker run as the runtime roles, which may not. */
    @Test
    void theJobMigrates_andServeAndWorkerDoNot() {
        for (Container c : containers()) {
            switch (c.command()) {
                case "migrate" -> {
                    assertThat(c.workload().kind()).as(c.name()).isEqualTo("Job");
                    assertThat(c.settings().isSet(Setting.DATABASE_URL) && c.settings().isSet(Setting.REDIS_URL))
                            .as("%s migrates the tables and loads the function library", c.name()).isTrue();
                }
                case "serve", "worker" -> {
                    assertThat(c.workload().kind()).as(c.name()).isEqualTo("Deployment");
                    assertThat(c.settings().bool(Setting.MIGRATE)).as("%s runs --no-migrate", c.name()).isFalse();
                }
                default -> throw new AssertionError(c.name() + ": not a command of these manifests");
            }
        }
        Map<Setting, Set<String>> values = new EnumMap<>(Setting.class);
        for (Container c : containers()) {
            for (Setting s : SHARED) {
                if (!c.command().equals("migrate") || s == Setting.SCHEMA || s == Setting.ORDERED) {
                    values.computeIfAbsent(s, k -> new TreeSet<>()).add(c.settings().get(s));
                }
            }
        }
        values.forEach((s, v) -> assertThat(v).as("--%s in every process", s.key()).hasSize(1));
    }

    /**
     * Readiness is {@code /health}, which answers 503 while Redis or PostgreSQL is down; liveness is not (a Redis
     * outage would restart every pod and mend nothing). Every HTTP probe's path is a route of the server open to a
     * caller without a token, and answers 200 from a serve that has tokens, as the kubelet asks it.
     */
    @Test
    void probesNameOpenRoutesOnTheServersPort() throws Exception {
        String line = "probe:read:" + "0".repeat(64);
        try (TestServe serve = TestServe.start(Map.of(Setting.API_TOKENS, line))) {
            Map<String, HttpApi.Route> open = new HashMap<>();
            for (HttpApi.Route r : serve.server.routes()) {
                if (r.method().equals("GET") && r.scope() == null) {
                    open.put(r.path(), r);
                }
            }
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
            for (Container c : containers()) {
                JsonNode spec = c.spec();
                boolean serves = c.command().equals("serve");
                for (String kind : List.of("startupProbe", "livenessProbe", "readinessProbe")) {
                    JsonNode probe = spec.path(kind);
                    if (probe.isMissingNode()) {
                        continue;
                    }
                    assertThat(serves).as("%s has a %s, but only serve listens", c.name(), kind).isTrue();
                    JsonNode get = probe.path("httpGet");
                    JsonNode tcp = probe.path("tcpSocket");
                    JsonNode port = !get.isMissingNode() ? get.path("port") : tcp.path("port");
                    assertThat(port.isMissingNode()).as("%s %s is httpGet or tcpSocket", c.name(), kind).isFalse();
                    assertThat(containerPort(spec, port)).as("%s %s's port", c.name(), kind)
                            .isEqualTo(c.settings().integer(Setting.PORT, 0));
                    if (!get.isMissingNode()) {
                        String path = get.path("path").asText();
                        assertThat(open).as("%s %s: GET %s is an open route", c.name(), kind, path).containsKey(path);
                        HttpResponse<String> answer = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                                + serve.server.port() + path)).timeout(Duration.ofSeconds(20)).build(),
                                HttpResponse.BodyHandlers.ofString());
                        assertThat(answer.statusCode()).as("%s %s: GET %s without a token", c.name(), kind, path)
                                .isEqualTo(200);
                    }
                }
                if (serves) {
                    assertThat(spec.path("readinessProbe").path("httpGet").path("path").asText())
                            .as("%s is ready while Redis and PostgreSQL answer", c.name()).isEqualTo("/health");
                    assertThat(spec.path("livenessProbe").isMissingNode()).as("%s has a liveness probe", c.name())
                            .isFalse();
                    assertThat(spec.path("livenessProbe").path("httpGet").path("path").asText())
                            .as("%s: liveness must not follow Redis and PostgreSQL", c.name()).isNotEqualTo("/health");
                } else {
                    assertThat(spec.path("ports").size()).as("%s listens on no port", c.name()).isZero();
                }
            }
        }
    }

    /** The Service sends its traffic to serve's port, by the name the container gives it. */
    @Test
    void theServiceReachesServesPort() {
        Container serve = containers().stream().filter(c -> c.command().equals("serve")).findFirst().orElseThrow();
        List<Doc> services = DOCS.stream().filter(d -> d.kind().equals("Service")).toList();
        assertThat(services).as("a Service for serve").hasSize(1);
        JsonNode spec = services.get(0).node().path("spec");
        JsonNode podLabels = serve.workload().node().path("spec").path("template").path("metadata").path("labels");
        spec.path("selector").fields().forEachRemaining(e -> assertThat(podLabels.path(e.getKey()).asText())
                .as("the Service's selector %s", e.getKey()).isEqualTo(e.getValue().asText()));
        for (JsonNode p : spec.path("ports")) {
            assertThat(containerPort(serve.spec(), p.path("targetPort"))).as("the Service's targetPort")
                    .isEqualTo(serve.settings().integer(Setting.PORT, 0));
        }
    }

    /**
     * A stop takes up to {@code --shutdown-timeout} for each part that waits (serve: HTTP requests in flight, then
     * running handlers; worker: handlers), then Redis commands for the last acks and the read loop's end, each up to
     * {@code --redis-timeout}. Kubernetes kills the container when its grace period ends: it must be longer.
     */
    @Test
    void theGracePeriodOutlastsTheStop() {
        for (Container c : containers()) {
            if (!c.workload().kind().equals("Deployment")) {
                continue;
            }
            int waits = c.command().equals("serve") ? 2 : 1;
            Duration stop = c.settings().duration(Setting.SHUTDOWN_TIMEOUT).multipliedBy(waits)
                    .plus(c.settings().duration(Setting.REDIS_TIMEOUT).multipliedBy(2));
            JsonNode grace = c.pod().path("terminationGracePeriodSeconds");
            assertThat(grace.isInt()).as("%s sets terminationGracePeriodSeconds", c.name()).isTrue();
            assertThat(Duration.ofSeconds(grace.asInt())).as("%s's grace period against its longest stop", c.name())
                    .isGreaterThan(stop);
        }
    }

    @Test
    void everyContainerRunsAsAUserThatIsNotRoot() {
        for (Container c : containers()) {
            JsonNode pod = c.pod().path("securityContext");
            assertThat(pod.path("runAsNonRoot").asBoolean()).as("%s runAsNonRoot", c.name()).isTrue();
            assertThat(pod.path("runAsUser").asInt()).as("%s runAsUser", c.name()).isPositive();
            assertThat(c.pod().path("automountServiceAccountToken").asBoolean(true))
                    .as("%s needs no Kubernetes API token", c.name()).isFalse();
            JsonNode own = c.spec().path("securityContext");
            assertThat(own.path("allowPrivilegeEscalation").asBoolean(true)).as("%s", c.name()).isFalse();
            assertThat(own.path("capabilities").path("drop").toString()).as("%s drops", c.name()).contains("\"ALL\"");
            if (own.path("readOnlyRootFilesystem").asBoolean()) {
                assertThat(mountPaths(c.spec())).as("%s: the JVM's temporary folder is writable", c.name())
                        .contains("/tmp");
            }
        }
    }

    /**
     * The Secrets the manifests read, each key of each, are the ones docs/kubernetes.md creates, and no more; every
     * file a setting names is a key of a Secret mounted there.
     */
    @Test
    void secretsAreTheOnesTheDocsCreate_andFileSettingsReadThem() throws IOException {
        Set<String> used = new TreeSet<>();
        for (Container c : containers()) {
            for (JsonNode e : c.spec().path("env")) {
                JsonNode ref = e.path("valueFrom").path("secretKeyRef");
                if (!ref.isMissingNode()) {
                    used.add(ref.path("name").asText() + "/" + ref.path("key").asText());
                }
            }
            for (JsonNode v : c.pod().path("volumes")) {
                JsonNode secret = v.path("secret");
                for (JsonNode item : secret.path("items")) {
                    used.add(secret.path("secretName").asText() + "/" + item.path("key").asText());
                }
            }
            for (Setting f : FILES) {
                if (c.settings().isSet(f)) {
                    assertThat(secretFileAt(c, c.settings().get(f))).as("%s --%s %s is a key of a mounted Secret",
                            c.name(), f.key(), c.settings().get(f)).isTrue();
                }
            }
        }
        assertThat(used).as("Secret keys the manifests read, against those docs/kubernetes.md creates")
                .isEqualTo(secretsTheDocsCreate());
    }

    /** The image the Jib profile builds exposes serve's default port and runs as the manifests' user. */
    @Test
    void theImageHasThePortAndUserOfTheManifests() throws IOException {
        String pom = Files.readString(ROOT.resolve("runbus-server/pom.xml"));
        int profile = pom.indexOf("<id>image</id>");
        assertThat(profile).as("the image profile of runbus-server/pom.xml").isPositive();
        String image = pom.substring(profile, pom.indexOf("</profile>", profile));
        Matcher port = Pattern.compile("<ports>\\s*<port>(\\d+)</port>\\s*</ports>").matcher(image);
        Matcher user = Pattern.compile("<user>(\\d+):(\\d+)</user>").matcher(image);
        assertThat(port.find() && user.find()).as("the image's port and numeric user").isTrue();
        assertThat(port.group(1)).isEqualTo(Setting.PORT.defaultValue());
        for (Container c : containers()) {
            JsonNode pod = c.pod().path("securityContext");
            assertThat(pod.path("runAsUser").asText() + ":" + pod.path("runAsGroup").asText()).as(c.name())
                    .isEqualTo(user.group(1) + ":" + user.group(2));
        }
        assertThat(containers().stream().map(c -> c.spec().path("image").asText()).distinct())
                .as("one image for every container").hasSize(1);
    }

    // ---- reading the manifests

    private static List<Container> containers() {
        return CONTAINERS;
    }

    /**
     * The container's command as the {@code runbus} command reads it: its arguments parsed by the picocli tree, its
     * settings resolved from them and its environment (a Secret's value stands in as a plausible value of its kind).
     */
    private static Container resolve(Doc d, JsonNode pod, JsonNode spec) {
        List<String> args = new ArrayList<>();
        spec.path("args").forEach(a -> args.add(a.asText()));
        Map<String, String> env = new LinkedHashMap<>();
        for (JsonNode e : spec.path("env")) {
            String name = e.path("name").asText();
            Setting setting = Setting.all().stream().filter(s -> s.envName().equals(name)).findFirst().orElse(null);
            assertThat(setting).as("%s: %s is the variable of a setting", d.name(), name).isNotNull();
            env.put(name, e.has("value") ? e.path("value").asText() : standIn(setting));
        }
        CommandLine root = Commands.commandLine(new Environment(env, scratch));
        CommandLine.ParseResult parsed = root.parseArgs(args.toArray(String[]::new));
        assertThat(parsed.hasSubcommand()).as("%s names a command: %s", d.name(), args).isTrue();
        CommandLine.ParseResult leaf = parsed.subcommand();
        while (leaf.hasSubcommand()) {
            leaf = leaf.subcommand();
        }
        Object command = leaf.commandSpec().userObject();
        assertThat(command).as("%s: %s", d.name(), args).isInstanceOf(BaseCommand.class);
        return new Container(d, pod, spec, leaf.commandSpec().name(), ((BaseCommand) command).settings());
    }

    /** What a Secret holds for a setting, of the form the setting takes. */
    private static String standIn(Setting s) {
        return switch (s) {
            case REDIS_URL -> "redis://runbus-worker:-@redis.invalid:6379";
            case DATABASE_URL -> "jdbc:postgresql://postgres.invalid:5432/app?user=runbus_app";
            case API_TOKENS -> "probe:read:" + "0".repeat(64);
            default -> "secret";
        };
    }

    /** The files a container's settings name, replaced by readable files here (their place is checked apart). */
    private static Map<Setting, String> placeholderFiles(Container c) {
        Map<Setting, String> out = new EnumMap<>(Setting.class);
        try {
            for (Setting f : FILES) {
                if (c.settings().isSet(f)) {
                    Path p = Files.createTempFile(scratch, f.key(), "");
                    Files.writeString(p, f == Setting.API_TOKENS_FILE ? "probe:read:" + "0".repeat(64) + "\n"
                            : "secret\n");
                    out.put(f, p.toString());
                }
            }
            String handlers = c.settings().get(Setting.HANDLER_PATH);
            if (!handlers.isEmpty()) {
                for (String entry : handlers.split(java.io.File.pathSeparator)) {
                    assertThat(entry).as("%s --handler-path in the image's handler folder", c.name())
                            .startsWith(HANDLERS);
                }
                out.put(Setting.HANDLER_PATH, Files.createTempFile(scratch, "handler", ".jar").toString());
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return out;
    }

    /** The number a probe's or the Service's port stands for: itself, or the container port of that name. */
    private static int containerPort(JsonNode container, JsonNode port) {
        if (port.isInt()) {
            return port.asInt();
        }
        for (JsonNode p : container.path("ports")) {
            if (p.path("name").asText().equals(port.asText())) {
                return p.path("containerPort").asInt();
            }
        }
        throw new AssertionError("no container port named " + port.asText());
    }

    private static List<String> mountPaths(JsonNode container) {
        List<String> out = new ArrayList<>();
        container.path("volumeMounts").forEach(m -> out.add(m.path("mountPath").asText()));
        return out;
    }

    /** Whether {@code file} is an item of a Secret volume mounted in the container. */
    private static boolean secretFileAt(Container c, String file) {
        for (JsonNode m : c.spec().path("volumeMounts")) {
            String dir = m.path("mountPath").asText();
            if (!file.startsWith(dir + "/")) {
                continue;
            }
            for (JsonNode v : c.pod().path("volumes")) {
                if (v.path("name").asText().equals(m.path("name").asText())) {
                    for (JsonNode item : v.path("secret").path("items")) {
                        if (file.equals(dir + "/" + item.path("path").asText())) {
                            return true;
                        }
                    }
                }
            }
        }
        return false;
    }

    /** {@code NAME/KEY} of each {@code kubectl create secret generic NAME --from-…=KEY=…} in docs/kubernetes.md. */
    private static Set<String> secretsTheDocsCreate() throws IOException {
        String doc = Files.readString(ROOT.resolve("docs/kubernetes.md")).replace("\\\n", " ");
        Set<String> out = new TreeSet<>();
        Matcher command = Pattern.compile("kubectl create secret generic (\\S+)([^\\n]*)").matcher(doc);
        while (command.find()) {
            Matcher key = Pattern.compile("--from-(?:literal|file)=([a-z0-9-]+)=").matcher(command.group(2));
            while (key.find()) {
                out.add(command.group(1) + "/" + key.group(1));
            }
        }
        return out;
    }
}

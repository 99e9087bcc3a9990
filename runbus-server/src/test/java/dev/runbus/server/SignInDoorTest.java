package dev.runbus.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.runbus.server.http.ApiToken;
import dev.runbus.server.http.ApiTokens;
import dev.runbus.server.http.Scope;
import dev.runbus.testkit.Wait;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The dashboard's sign-in, the one door anyone may knock at, costs no more than a door: its body is read through the
 * same bounded reader as every other ({@code --max-body}, chunked or not), only as a URL-encoded form (a multipart
 * body is refused before it is read, so nothing reaches the temporary folder), its requests are counted in flight
 * in a pool of their own, and its attempts are rate-limited per address. With a real serve on the test servers;
 * each case knocks from loopback addresses of its own, so that their limits do not meet.
 */
class SignInDoorTest {

    static final int MAX_BODY = 1024;
    static final int SIGN_IN_RATE = 10;
    static final String TOKEN = ApiTokens.generate(new SecureRandom());
    static TestServe serve;

    @BeforeAll
    static void start() {
        serve = TestServe.start(Map.of(Setting.API_TOKENS, new ApiToken("operator", Set.of(Scope.SUBMIT, Scope.READ),
                        ApiTokens.sha256(TOKEN)).line(), Setting.MAX_BODY, Integer.toString(MAX_BODY),
                Setting.SIGN_IN_RATE, Integer.toString(SIGN_IN_RATE),
                // Long enough that a server still reading a body would not have answered within the cases' waits.
                Setting.REQUEST_TIMEOUT, "120s", Setting.IDLE_TIMEOUT, "120s"));
    }

    @AfterAll
    static void stop() {
        serve.close();
    }

    @Test
    void aChunkedSignInPastMaxBodyIs413BeforeItsEnd() throws Exception {
        try (OpenRequest r = new OpenRequest("127.0.0.11", "/login", "application/x-www-form-urlencoded")) {
            // Four times the limit, and the body never ends: the server answers from the first MAX_BODY + 1 bytes.
            r.chunk("token=" + "a".repeat(4 * MAX_BODY));
            String answer = r.awaitAnswer();
            assertThat(answer).startsWith("HTTP/1.1 413").contains("larger than the limit of " + MAX_BODY + " bytes");
        }
    }

    @Test
    void aMultipartSignInIs415AndNothingIsWrittenToTheTemporaryFolder() throws Exception {
        Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
        List<Path> before = multipartFiles(tmp);
        try (OpenRequest r = new OpenRequest("127.0.0.12", "/login", "multipart/form-data; boundary=XYZ")) {
            // A file part of 2 MB, past what a multipart reader keeps in memory, and the body does not end.
            r.chunk("--XYZ\r\nContent-Disposition: form-data; name=\"token\"; filename=\"t\"\r\n"
                    + "Content-Type: application/octet-stream\r\n\r\n");
            for (int i = 0; i < 32; i++) {
                r.chunk("b".repeat(64 * 1024));
            }
            String answer = r.awaitAnswer();
            assertThat(answer).startsWith("HTTP/1.1 415").contains("application/x-www-form-urlencoded");
            assertThat(multipartFiles(tmp)).as("multipart parts in " + tmp).isEqualTo(before);
        }
    }

    @Test
    void moreDribblingSignInsThanThreadsLeaveHealthAndATokensRequestAnswering() throws Exception {
        List<SlowClient> slow = new ArrayList<>();
        try {
            // 260 from ten addresses: more than Jetty's 250 threads, and more than one address's cap.
            for (int i = 0; i < 260; i++) {
                slow.add(SlowClient.signIn(serve.server.port(), "127.0.1." + (1 + i % 10)));
            }
            // The pool without credentials holds an eighth of --max-in-flight (128 by default): 16 are read.
            Wait.until("all but 16 sign-ins refused", Duration.ofSeconds(40),
                    () -> slow.stream().filter(s -> s.answer().startsWith("HTTP/1.1 503")).count() == 260 - 16);
            assertThat(slow.stream().filter(s -> s.answer().isEmpty()).count()).isEqualTo(16);
            assertThat(status("/health", null)).isEqualTo(200);
            assertThat(status("/v1/streams", TOKEN)).isEqualTo(200);
            assertThat(serve.submit("beside the dribblers", TOKEN).statusCode()).isEqualTo(201);
        } finally {
            slow.forEach(SlowClient::close);
        }
    }

    @Test
    void signInAttemptsPastTheRateAre429WithRetryAfter() throws Exception {
        List<Integer> statuses = new ArrayList<>();
        String refused = null;
        for (int i = 0; i < SIGN_IN_RATE + 1; i++) {
            String answer = post("127.0.0.13", "token=rbt_wrong" + i);
            statuses.add(Integer.parseInt(answer.substring(9, 12)));
            if (answer.startsWith("HTTP/1.1 429")) {
                refused = answer;
            }
        }
        // Ten a minute: the eleventh within the same few seconds finds the bucket empty.
        assertThat(statuses.subList(0, SIGN_IN_RATE)).containsOnly(401);
        assertThat(statuses.get(SIGN_IN_RATE)).isEqualTo(429);
        assertThat(refused).containsPattern("(?i)retry-after: [1-6]\r\n");
        assertThat(post("127.0.0.14", "token=" + TOKEN)).as("another address").startsWith("HTTP/1.1 303");
    }

    private static List<Path> multipartFiles(Path tmp) throws IOException {
        try (Stream<Path> files = Files.list(tmp)) {
            return files.filter(f -> f.getFileName().toString().startsWith("MultiPart")).sorted().toList();
        }
    }

    private static int status(String path, String token) {
        try {
            HttpResponse<String> r = serve.send(serve.request(path).timeout(Duration.ofSeconds(10))
                    .header("Authorization", "Bearer " + (token == null ? "-" : token)));
            return r.statusCode();
        } catch (Exception e) {
            return -1; // no answer in time
        }
    }

    /** A whole sign-in form, sent from {@code localAddress}: the answer's status line, headers and body. */
    private static String post(String localAddress, String form) throws Exception {
        try (OpenRequest r = new OpenRequest(localAddress, "/login", "application/x-www-form-urlencoded")) {
            r.chunk(form);
            r.end();
            return r.awaitAnswer();
        }
    }

    /**
     * A chunked request whose body the test writes piece by piece and may never end, from a chosen loopback address;
     * the answer is read as it comes by a thread of its own.
     */
    private static final class OpenRequest implements AutoCloseable {
        private final Socket socket = new Socket();
        private final OutputStream out;
        private final SocketAnswer answer;

        OpenRequest(String localAddress, String path, String contentType) throws IOException {
            socket.bind(new InetSocketAddress(localAddress, 0));
            socket.connect(new InetSocketAddress("127.0.0.1", serve.server.port()), 5_000);
            out = socket.getOutputStream();
            out.write(("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + serve.server.port() + "\r\nContent-Type: "
                    + contentType + "\r\nTransfer-Encoding: chunked\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            answer = new SocketAnswer(socket, "open-request-reader");
        }

        void chunk(String text) throws IOException {
            byte[] b = text.getBytes(StandardCharsets.UTF_8);
            try {
                out.write((Integer.toHexString(b.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
                out.write(b);
                out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
            } catch (IOException closedByServer) {
                // the server answered and closed before taking it all: the answer says what it thought
            }
        }

        void end() throws IOException {
            out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
        }

        /** The answer, once its head has arrived (within 30 s: a server still reading the body has not). */
        String awaitAnswer() {
            Wait.until("an answer to " + socket.getLocalAddress(), Duration.ofSeconds(30),
                    () -> answer.text().contains("\r\n\r\n"));
            return answer.text();
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}

package dev.runbus.server.http;

import dev.runbus.server.Setting;
import dev.runbus.server.Settings;
import io.javalin.config.JavalinConfig;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.KeyStore;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.server.handler.StatisticsHandler;
import org.eclipse.jetty.util.ssl.SslContextFactory;

/**
 * The Jetty underneath the API: one connector (HTTP, or HTTPS with {@code --tls-cert}/{@code --tls-key}) on
 * {@code --host}:{@code --port}, and the limits that keep one client from holding the server:
 *
 * <ul>
 *   <li>request line and headers at most {@code --max-header-size} bytes (431 past it);</li>
 *   <li>a connection idle for {@code --idle-timeout} is closed; a connection waiting for the rest of its headers
 *       holds no thread meanwhile (Jetty parses them without blocking);</li>
 *   <li>a body must arrive within {@code --request-timeout} of the handler's first read, and no single read
 *       waits longer (408 otherwise);</li>
 *   <li>stopping waits up to {@code --shutdown-timeout} for requests in flight, then closes the rest.</li>
 * </ul>
 * Errors Jetty answers before a request reaches the API (a malformed request line, a URI or headers too large) are
 * JSON like the API's own, with a request id like every response, and without Jetty's version.
 */
final class JettySetup {

    private JettySetup() {
    }

    /** @param keyStore the certificate and key to serve HTTPS with ({@link PemKeyStore}); null: plain HTTP */
    static void configure(JavalinConfig config, Settings s, KeyStore keyStore) {
        String host = s.get(Setting.HOST);
        int port = s.integer(Setting.PORT, 0);
        int maxHeader = s.integer(Setting.MAX_HEADER_SIZE, 1024);
        long requestTimeout = s.duration(Setting.REQUEST_TIMEOUT).toMillis();
        long idleTimeout = s.duration(Setting.IDLE_TIMEOUT).toMillis();
        long stopTimeout = s.duration(Setting.SHUTDOWN_TIMEOUT).toMillis();
        SslContextFactory.Server tls = keyStore == null ? null : tls(keyStore);
        config.jetty.modifyServer(server -> {
            // Graceful stop needs a handler that counts requests in flight; Javalin adds its own handler inside.
            server.setHandler(new StatisticsHandler());
            server.setStopTimeout(stopTimeout);
            server.setErrorHandler(new JsonErrors());
        });
        config.jetty.addConnector((server, base) -> {
            HttpConfiguration http = new HttpConfiguration(base);
            http.setRequestHeaderSize(maxHeader);
            http.setSendServerVersion(false);
            http.setSendXPoweredBy(false);
            // How long one blocking read of a body waits; the whole body's deadline is RunEndpoints'. (Jetty's
            // minimum data rate is not used: it counts from the body's first byte, so a request that waited in
            // the queue of a busy server would be refused as if its client were slow.)
            http.setIdleTimeout(Math.max(1, requestTimeout));
            ServerConnector connector;
            if (tls == null) {
                connector = new ServerConnector(server, new HttpConnectionFactory(http));
            } else {
                SecureRequestCustomizer secure = new SecureRequestCustomizer();
                // Clients often connect by address: a certificate's names are the client's to check, not ours.
                secure.setSniHostCheck(false);
                http.addCustomizer(secure);
                connector = new ServerConnector(server, new SslConnectionFactory(tls, "http/1.1"),
                        new HttpConnectionFactory(http));
            }
            connector.setHost(host);
            connector.setPort(port);
            connector.setIdleTimeout(idleTimeout);
            return connector;
        });
    }

    /** The TLS context serving the certificate and key of {@code keyStore}. */
    private static SslContextFactory.Server tls(KeyStore keyStore) {
        SslContextFactory.Server f = new SslContextFactory.Server();
        f.setKeyStore(keyStore);
        f.setKeyStorePassword(new String(PemKeyStore.PASSWORD));
        f.setIncludeProtocols("TLSv1.3", "TLSv1.2");
        return f;
    }

    /** Jetty's own error pages (bad request line, headers too large) as the API's JSON errors. */
    private static final class JsonErrors extends ErrorHandler {
        JsonErrors() {
            setShowServlet(false);
            setShowStacks(false);
            setShowMessageInTitle(false);
        }

        /** Errors Jetty answers itself once a request is parsed: a 503 while stopping, mostly. */
        @Override
        protected void generateAcceptableResponse(org.eclipse.jetty.server.Request baseRequest,
                jakarta.servlet.http.HttpServletRequest request, jakarta.servlet.http.HttpServletResponse response,
                int code, String message) throws java.io.IOException {
            baseRequest.setHandled(true);
            String id = RequestIds.next();
            response.setHeader("X-Request-Id", id);
            response.setContentType("application/json");
            String text = code == 503 ? "the server is stopping: try again" : "request refused";
            response.getOutputStream().write(body(text, id));
        }

        @Override
        public ByteBuffer badMessageError(int status, String reason, HttpFields.Mutable fields) {
            String id = RequestIds.next();
            fields.put("X-Request-Id", id);
            fields.put(HttpHeader.CONTENT_TYPE, "application/json");
            String message = switch (status) {
                case 431 -> "request headers are too large";
                case 414 -> "the request's URI is too long";
                default -> "malformed request";
            };
            return ByteBuffer.wrap(body(message, id));
        }

        private static byte[] body(String message, String id) {
            return ("{\"error\":\"" + message + "\",\"request_id\":\"" + id + "\"}")
                    .getBytes(StandardCharsets.UTF_8);
        }
    }
}

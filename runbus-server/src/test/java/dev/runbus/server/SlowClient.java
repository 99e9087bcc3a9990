package dev.runbus.server;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A client that sends a request's headers at once and then dribbles its body, one byte every 200 ms, as a
 * slowloris does: the server sees a request in flight whose body is still arriving. What the server answers is
 * read as it comes, by a thread of its own, so a test can wait for it with a deadline. Bounded: it stops
 * sending when its body is sent, at {@link #leave} or at {@link #close}.
 */
final class SlowClient implements AutoCloseable {

    private static final ScheduledExecutorService DRIBBLER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "slow-client-dribbler");
        t.setDaemon(true);
        return t;
    });
    private static final int BODY_BYTES = 2_000;
    /** A sign-in's: within the smallest --max-body the tests use. */
    private static final int SIGN_IN_BYTES = 1_000;

    private final Socket socket;
    private final OutputStream out;
    private final SocketAnswer answer;
    private final ScheduledFuture<?> dribble;
    private final int bodyBytes;
    private int sent;

    /**
     * @param localAddress the client address to connect from (any of 127.0.0.0/8), or null for any
     * @param headers      request header lines besides Host, Content-Type and Content-Length
     */
    SlowClient(int port, String localAddress, String path, String... headers) throws IOException {
        this("application/json", "{", BODY_BYTES, port, localAddress, path, headers);
    }

    /** A sign-in form ({@code POST /login}) whose body, {@code token=} and then spaces, arrives a byte at a time. */
    static SlowClient signIn(int port, String localAddress) throws IOException {
        return new SlowClient("application/x-www-form-urlencoded", "token=", SIGN_IN_BYTES, port, localAddress,
                "/login");
    }

    private SlowClient(String contentType, String firstBytes, int bodyBytes, int port, String localAddress,
                       String path, String... headers) throws IOException {
        this.bodyBytes = bodyBytes;
        socket = new Socket();
        if (localAddress != null) {
            socket.bind(new InetSocketAddress(localAddress, 0));
        }
        socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
        out = socket.getOutputStream();
        StringBuilder head = new StringBuilder("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + port
                + "\r\nContent-Type: " + contentType + "\r\nContent-Length: " + bodyBytes + "\r\n");
        for (String h : headers) {
            head.append(h).append("\r\n");
        }
        out.write(head.append("\r\n").append(firstBytes).toString().getBytes(StandardCharsets.US_ASCII));
        out.flush();
        sent = firstBytes.length();
        answer = new SocketAnswer(socket, "slow-client-reader");
        dribble = DRIBBLER.scheduleWithFixedDelay(this::sendOneByte, 200, 200, TimeUnit.MILLISECONDS);
    }

    private void sendOneByte() {
        try {
            if (sent < bodyBytes - 1) {
                out.write(' ');
                out.flush();
                sent++;
            }
        } catch (IOException closed) {
            dribble.cancel(false);
        }
    }

    /** What the server answered so far: empty while the request is still being read. */
    String answer() {
        return answer.text();
    }

    /**
     * Leaves as a client that gives up does: stops sending and half-closes, so that the server reads the end of
     * a body that never came and answers; the answer tells that the server is done with the request.
     */
    void leave() {
        dribble.cancel(false);
        try {
            socket.shutdownOutput();
        } catch (IOException alreadyClosed) {
            // the server closed it first
        }
    }

    @Override
    public void close() {
        dribble.cancel(false);
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }
}

package dev.runbus.testing;

import io.lettuce.core.RedisURI;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A loopback TCP proxy between a client under test and a real server, to make network faults on demand:
 * hold all traffic ({@link #pause()}), forward requests but lose the replies ({@link #swallowReplies}), from now or
 * from the first request that names a given key ({@link #swallowRepliesFrom}), or cut every connection
 * ({@link #dropConnections()}). The server stays real; only the wire misbehaves.
 */
public final class TcpProxy implements AutoCloseable {

    private final String targetHost;
    private final int targetPort;
    private final ServerSocket server;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Object gate = new Object();
    private volatile boolean paused;
    private volatile boolean swallowReplies;
    /** Bytes whose first appearance in a request turns {@link #swallowReplies} on; null when none is awaited. */
    private volatile byte[] swallowFrom;
    private volatile boolean closed;

    private TcpProxy(String targetHost, int targetPort) throws IOException {
        this.targetHost = targetHost;
        this.targetPort = targetPort;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "tcp-proxy-accept-" + server.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** A proxy on a free loopback port that forwards to {@code host:port}. */
    public static TcpProxy start(String host, int port) {
        try {
            return new TcpProxy(host, port);
        } catch (IOException e) {
            throw new IllegalStateException("cannot open a proxy port", e);
        }
    }

    /** A proxy on a free loopback port in front of the Redis server at {@code redisUri}. */
    public static TcpProxy before(String redisUri) {
        RedisURI server = RedisURI.create(redisUri);
        return start(server.getHost(), server.getPort());
    }

    public int port() {
        return server.getLocalPort();
    }

    /** A redis URI that connects through this proxy. */
    public String uri() {
        return "redis://127.0.0.1:" + port();
    }

    /** Holds traffic both ways: the client's commands get no answer (and the server sees none) until resumed. */
    public void pause() {
        paused = true;
    }

    public void resume() {
        synchronized (gate) {
            paused = false;
            gate.notifyAll();
        }
    }

    /** While on, requests still reach the server but its replies are thrown away. */
    public void swallowReplies(boolean on) {
        swallowReplies = on;
    }

    /**
     * From the first request that carries {@code marker} (a key only one kind of command names, say) on any
     * connection, replies are thrown away as by {@link #swallowReplies}: that request still reaches the server, and
     * its reply is lost. Ends with {@code swallowReplies(false)}.
     */
    public void swallowRepliesFrom(String marker) {
        swallowFrom = marker.getBytes(StandardCharsets.UTF_8);
    }

    /** Closes every open connection; new ones are accepted as before. */
    public void dropConnections() {
        for (Socket s : sockets) {
            closeQuietly(s);
        }
        sockets.clear();
    }

    /** How many client connections are open now. */
    public int connections() {
        return sockets.size() / 2;
    }

    @Override
    public void close() {
        closed = true;
        resume();
        closeQuietly(server);
        dropConnections();
    }

    private void accept() {
        while (!closed) {
            try {
                Socket client = server.accept();
                Socket upstream;
                try {
                    upstream = new Socket(targetHost, targetPort);
                } catch (IOException e) {
                    closeQuietly(client);
                    continue;
                }
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                sockets.add(client);
                sockets.add(upstream);
                pump(client, upstream, false);
                pump(upstream, client, true);
            } catch (IOException e) {
                if (!closed) {
                    continue; // one failed accept; keep serving
                }
            }
        }
    }

    private void pump(Socket from, Socket to, boolean replies) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16 * 1024];
            byte[] seen = new byte[0]; // the request bytes still to look for the marker in: this read and a tail
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    awaitResume();
                    if (replies && swallowReplies) {
                        continue;
                    }
                    byte[] marker = swallowFrom;
                    if (!replies && marker != null) {
                        seen = tail(seen, buf, n, marker.length);
                        if (contains(seen, marker)) {
                            swallowFrom = null;
                            swallowReplies = true; // before the request goes on: its reply is lost
                        }
                    }
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // the connection was dropped or the proxy closed
            } finally {
                closeQuietly(from);
                closeQuietly(to);
                sockets.remove(from);
                sockets.remove(to);
            }
        }, "tcp-proxy-" + (replies ? "reply" : "request") + "-" + port());
        t.setDaemon(true);
        t.start();
    }

    /** The last bytes of {@code previous} (fewer than the marker: a marker split by a read is found) and the read. */
    private static byte[] tail(byte[] previous, byte[] read, int n, int markerLength) {
        int keep = Math.min(previous.length, markerLength - 1);
        byte[] joined = Arrays.copyOfRange(previous, previous.length - keep, previous.length + n);
        System.arraycopy(read, 0, joined, keep, n);
        return joined;
    }

    private static boolean contains(byte[] bytes, byte[] marker) {
        for (int i = 0; i + marker.length <= bytes.length; i++) {
            if (Arrays.equals(bytes, i, i + marker.length, marker, 0, marker.length)) {
                return true;
            }
        }
        return false;
    }

    private void awaitResume() throws InterruptedException {
        synchronized (gate) {
            while (paused && !closed) {
                gate.wait();
            }
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception ignored) {
            // closing anyway
        }
    }
}

package dev.runbus.testing;

import io.lettuce.core.RedisURI;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A loopback TCP proxy between a client under test and a real server, to make network faults on demand:
 * hold all traffic ({@link #pause()}), forward requests but lose the replies ({@link #swallowReplies}), or cut
 * every connection ({@link #dropConnections()}). The server stays real; only the wire misbehaves.
 */
public final class TcpProxy implements AutoCloseable {

    private final String targetHost;
    private final int targetPort;
    private final ServerSocket server;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Object gate = new Object();
    private volatile boolean paused;
    private volatile boolean swallowReplies;
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
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    awaitResume();
                    if (replies && swallowReplies) {
                        continue;
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

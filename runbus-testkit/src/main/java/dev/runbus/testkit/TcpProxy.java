package dev.runbus.testkit;

import io.lettuce.core.RedisURI;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * A loopback TCP proxy between a client under test and a real server, to make network faults on demand:
 * hold all traffic ({@link #pause()}), forward requests but lose the replies ({@link #swallowReplies}), from now or
 * from the first request that names a given key ({@link #swallowRepliesFrom}), hold the replies of the connection
 * that sent a given command ({@link #holdRepliesFrom}), or cut every connection
 * ({@link #dropConnections()}). The server stays real; only the wire misbehaves.
 *
 * <p>Lost replies are lost with their connection: a drop ends {@link #swallowReplies}, so the connections a client
 * opens after it get their replies, whenever the test turns the swallowing off.
 */
public final class TcpProxy implements AutoCloseable {

    /** Where new connections go: "host:port" ({@link #forwardTo}). */
    private volatile String target;
    private final ServerSocket server;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final List<Connection> connections = new CopyOnWriteArrayList<>();
    private final Object gate = new Object();
    private volatile boolean paused;
    /** Whether connections accepted now lose their replies; each connection keeps its own flag after that. */
    private volatile boolean swallowReplies;
    /** Taken to accept a connection, to change what swallows and to drop: a drop and an accept never interleave. */
    private final Object connecting = new Object();
    /** Bytes whose first appearance in a request turns {@link #swallowReplies} on; null when none is awaited. */
    private volatile byte[] swallowFrom;
    private volatile boolean closed;
    /** The commands counted, and whose connection's replies are held from the first one on; null when none are. */
    private volatile Predicate<List<String>> holdFrom;
    /** Whether the next command matching {@link #holdFrom} holds its connection's replies. */
    private final AtomicBoolean armed = new AtomicBoolean();
    private final AtomicInteger matched = new AtomicInteger();
    /** Client connections closed at once because the target did not accept theirs. */
    private final AtomicInteger unreached = new AtomicInteger();

    private TcpProxy(String targetHost, int targetPort) throws IOException {
        this.target = targetHost + ":" + targetPort;
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

    /**
     * Sends the connections opened from now on to the Redis server at {@code redisUri}; open ones stay where they
     * are ({@link #dropConnections} closes them): a server replaced behind the same address, as a failover or an
     * upgrade does.
     */
    public void forwardTo(String redisUri) {
        RedisURI server = RedisURI.create(redisUri);
        target = server.getHost() + ":" + server.getPort();
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

    /**
     * While on, requests still reach the server but its replies are thrown away, on every open connection and those
     * opened until it is turned off or the connections are dropped ({@link #dropConnections} turns it off: the
     * replies are lost with their connection, and the client's new connections are answered).
     */
    public void swallowReplies(boolean on) {
        synchronized (connecting) {
            swallowReplies = on;
            for (Connection c : connections) {
                c.swallowing = on;
            }
        }
    }

    /**
     * From the first request that carries {@code marker} (a key only one kind of command names, say) on any
     * connection, replies are thrown away as by {@link #swallowReplies}: that request still reaches the server, and
     * its reply is lost. Ends with {@code swallowReplies(false)} or {@link #dropConnections}.
     */
    public void swallowRepliesFrom(String marker) {
        swallowFrom = marker.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Holds the replies of the connection that sends the first command matching {@code command} (its arguments, the
     * command's name first) from that command's reply on, until {@link #releaseReplies()}: the command runs on the
     * server, its answer comes late. Requests still pass, on every connection. {@link #matchedCommands()} counts the
     * commands matching from now on, after the release too.
     */
    public void holdRepliesFrom(Predicate<List<String>> command) {
        matched.set(0);
        holdFrom = command;
        armed.set(true);
    }

    /** Lets the held replies through; nothing is held any more. */
    public void releaseReplies() {
        synchronized (gate) {
            armed.set(false);
            for (Connection c : connections) {
                c.holdingReplies = false;
            }
            gate.notifyAll();
        }
    }

    /** How many commands matched the one given to {@link #holdRepliesFrom} since (held or not). */
    public int matchedCommands() {
        return matched.get();
    }

    /**
     * Closes every open connection; new ones are accepted as before, and their replies are not swallowed (the
     * closed ones' replies stay lost to the end).
     */
    public void dropConnections() {
        synchronized (connecting) {
            swallowReplies = false;
            swallowFrom = null;
            for (Socket s : sockets) {
                closeQuietly(s);
            }
            sockets.clear();
        }
    }

    /**
     * How many client connections were closed as soon as accepted, because the target ({@link #forwardTo}) did not
     * accept the proxy's: to the client, a connect that failed.
     */
    public int unreachedConnections() {
        return unreached.get();
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
                    String to = target;
                    int colon = to.lastIndexOf(':');
                    upstream = new Socket(to.substring(0, colon), Integer.parseInt(to.substring(colon + 1)));
                } catch (IOException e) {
                    unreached.incrementAndGet();
                    closeQuietly(client);
                    continue;
                }
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                Connection connection = new Connection();
                synchronized (connecting) {
                    sockets.add(client);
                    sockets.add(upstream);
                    connection.swallowing = swallowReplies;
                    connections.add(connection);
                }
                pump(client, upstream, connection, false);
                pump(upstream, client, connection, true);
            } catch (IOException e) {
                if (!closed) {
                    continue; // one failed accept; keep serving
                }
            }
        }
    }

    private void pump(Socket from, Socket to, Connection connection, boolean replies) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16 * 1024];
            byte[] seen = new byte[0]; // the request bytes still to look for the marker in: this read and a tail
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    awaitResume();
                    if (replies) {
                        awaitRepliesReleased(connection);
                        if (connection.swallowing) {
                            continue;
                        }
                    } else {
                        connection.requests.add(buf, n).forEach(command -> matchCommand(connection, command));
                    }
                    byte[] marker = swallowFrom;
                    if (!replies && marker != null) {
                        seen = tail(seen, buf, n, marker.length);
                        if (contains(seen, marker)) {
                            swallowFrom(marker); // before the request goes on: its reply is lost
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
                connections.remove(connection);
            }
        }, "tcp-proxy-" + (replies ? "reply" : "request") + "-" + port());
        t.setDaemon(true);
        t.start();
    }

    /** Turns swallowing on for every connection, unless a drop or another request ended the wait for the marker. */
    private void swallowFrom(byte[] marker) {
        synchronized (connecting) {
            if (swallowFrom == marker) {
                swallowFrom = null;
                swallowReplies(true);
            }
        }
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

    /** Before the command is passed on: its reply cannot have come yet. */
    private void matchCommand(Connection connection, List<String> command) {
        Predicate<List<String>> hold = holdFrom;
        if (hold != null && hold.test(command)) {
            matched.incrementAndGet();
            if (armed.compareAndSet(true, false)) {
                connection.holdingReplies = true;
            }
        }
    }

    private void awaitResume() throws InterruptedException {
        synchronized (gate) {
            while (paused && !closed) {
                gate.wait();
            }
        }
    }

    private void awaitRepliesReleased(Connection connection) throws InterruptedException {
        synchronized (gate) {
            while (connection.holdingReplies && !closed) {
                gate.wait();
            }
        }
    }

    /** One client connection: the commands it sent, and whether its replies are held or swallowed. */
    private static final class Connection {
        final Requests requests = new Requests();
        volatile boolean holdingReplies;
        /** Whether its replies are thrown away. */
        volatile boolean swallowing;
    }

    /**
     * The commands of a connection's requests, cut out of its bytes as they pass: RESP arrays of bulk strings, which
     * is how a client sends every command. A chunk may end inside a command; the rest comes with the next one.
     */
    private static final class Requests {
        private byte[] pending = new byte[0];
        private boolean lost;

        /** The commands complete once {@code n} more bytes came. */
        List<List<String>> add(byte[] buf, int n) {
            if (lost) {
                return List.of();
            }
            byte[] all = Arrays.copyOf(pending, pending.length + n);
            System.arraycopy(buf, 0, all, pending.length, n);
            List<List<String>> commands = new ArrayList<>();
            int at = 0;
            try {
                for (int[] end = {0}; ; ) {
                    List<String> command = command(all, at, end);
                    if (command == null) {
                        break;
                    }
                    commands.add(command);
                    at = end[0];
                }
            } catch (RuntimeException notResp) {
                lost = true; // not a client speaking RESP arrays: nothing is matched on this connection
                return commands;
            }
            pending = Arrays.copyOfRange(all, at, all.length);
            return commands;
        }

        /** The command starting at {@code at}, its end put in {@code end[0]}; null when it is not complete yet. */
        private static List<String> command(byte[] b, int at, int[] end) {
            int[] pos = {at};
            Long count = number(b, pos, '*');
            if (count == null) {
                return null;
            }
            List<String> args = new ArrayList<>();
            for (long i = 0; i < count; i++) {
                Long length = number(b, pos, '$');
                if (length == null || pos[0] + length + 2 > b.length) {
                    return null;
                }
                args.add(new String(b, pos[0], length.intValue(), StandardCharsets.ISO_8859_1));
                pos[0] += length.intValue() + 2;
            }
            end[0] = pos[0];
            return args;
        }

        /** The number after {@code type} up to CRLF at {@code pos[0]}, which moves past it; null when incomplete. */
        private static Long number(byte[] b, int[] pos, char type) {
            if (pos[0] >= b.length) {
                return null;
            }
            if (b[pos[0]] != type) {
                throw new IllegalStateException("expected '" + type + "' at " + pos[0]);
            }
            for (int i = pos[0] + 1; i + 1 < b.length; i++) {
                if (b[i] == '\r' && b[i + 1] == '\n') {
                    long n = Long.parseLong(new String(b, pos[0] + 1, i - pos[0] - 1, StandardCharsets.US_ASCII));
                    pos[0] = i + 2;
                    return n;
                }
            }
            return null;
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

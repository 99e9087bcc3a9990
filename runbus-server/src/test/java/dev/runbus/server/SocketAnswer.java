package dev.runbus.server;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * What a server writes back on a socket, read as it comes by a daemon thread of its own, so that a test can wait
 * for it with a deadline while it goes on sending (or holds) its request. What arrived stays after either side
 * closes.
 */
final class SocketAnswer {

    private final ByteArrayOutputStream answer = new ByteArrayOutputStream();

    /** Starts reading {@code socket}'s input; {@code name} names the thread. */
    SocketAnswer(Socket socket, String name) {
        Thread reader = new Thread(() -> read(socket), name);
        reader.setDaemon(true);
        reader.start();
    }

    private void read(Socket socket) {
        byte[] buffer = new byte[4096];
        try (InputStream in = socket.getInputStream()) {
            int n;
            while ((n = in.read(buffer)) >= 0) {
                synchronized (answer) {
                    answer.write(buffer, 0, n);
                }
            }
        } catch (IOException closed) {
            // the test closed it, or the server did: what arrived stays
        }
    }

    /** What arrived so far, as bytes read one to one into characters. */
    String text() {
        synchronized (answer) {
            return answer.toString(StandardCharsets.ISO_8859_1);
        }
    }
}

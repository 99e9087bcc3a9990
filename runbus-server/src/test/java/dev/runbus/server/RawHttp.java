package dev.runbus.server;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Locale;

/**
 * One request written by hand over a socket of its own, from a chosen loopback address (the JDK client can set
 * neither the Host header nor the local address): status, headers and body of the answer. Host is 127.0.0.1 and
 * the port unless the headers given name one.
 */
record RawHttp(int status, String head, String body) {

    static RawHttp send(int port, String localAddress, String method, String path, String... headers)
            throws Exception {
        return exchange(port, localAddress, method, path, null, headers);
    }

    /** A POST of {@code body} as {@code contentType}, from any local address. */
    static RawHttp post(int port, String path, String contentType, String body, String... headers) throws Exception {
        String[] all = java.util.Arrays.copyOf(headers, headers.length + 1);
        all[headers.length] = "Content-Type: " + contentType;
        return exchange(port, null, "POST", path, body.getBytes(StandardCharsets.UTF_8), all);
    }

    private static RawHttp exchange(int port, String localAddress, String method, String path, byte[] content,
                                    String... headers) throws Exception {
        try (Socket s = new Socket()) {
            if (localAddress != null) {
                s.bind(new InetSocketAddress(localAddress, 0));
            }
            s.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            s.setSoTimeout(20_000);
            StringBuilder request = new StringBuilder(method + " " + path + " HTTP/1.1\r\n");
            if (Arrays.stream(headers).noneMatch(h -> h.toLowerCase(Locale.ROOT).startsWith("host:"))) {
                request.append("Host: 127.0.0.1:").append(port).append("\r\n");
            }
            for (String h : headers) {
                request.append(h).append("\r\n");
            }
            if (method.equals("POST")) {
                request.append("Content-Length: ").append(content == null ? 0 : content.length).append("\r\n");
            }
            request.append("Connection: close\r\n\r\n");
            s.getOutputStream().write(request.toString().getBytes(StandardCharsets.US_ASCII));
            if (content != null) {
                s.getOutputStream().write(content);
            }
            s.getOutputStream().flush();
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            s.getInputStream().transferTo(all);
            String response = all.toString(StandardCharsets.UTF_8);
            int bodyAt = response.indexOf("\r\n\r\n");
            String head = response.substring(0, bodyAt);
            String body = response.substring(bodyAt + 4);
            if (head.toLowerCase(Locale.ROOT).contains("transfer-encoding: chunked") && !body.isEmpty()) {
                body = unchunk(body);
            }
            return new RawHttp(Integer.parseInt(response.substring(9, 12)), head, body);
        }
    }

    /** The value of a response header, or null. */
    String header(String name) {
        for (String line : head.split("\r\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && line.substring(0, colon).trim().equalsIgnoreCase(name)) {
                return line.substring(colon + 1).trim();
            }
        }
        return null;
    }

    JsonNode json() throws Exception {
        return Json.MAPPER.readTree(body);
    }

    private static String unchunk(String chunked) {
        StringBuilder out = new StringBuilder();
        int at = 0;
        while (true) {
            int eol = chunked.indexOf("\r\n", at);
            int size = Integer.parseInt(chunked.substring(at, eol).trim(), 16);
            if (size == 0) {
                return out.toString();
            }
            out.append(chunked, eol + 2, eol + 2 + size);
            at = eol + 2 + size + 2;
        }
    }
}

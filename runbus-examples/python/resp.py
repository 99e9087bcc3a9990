"""A small Redis client on the standard library's socket: the RESP2 protocol, enough for the wire format.

Commands are sent as arrays of bulk strings (str is sent as UTF-8, bytes as they are); replies come back as
bytes (bulk and simple strings), int, list or None. An error reply raises RedisError with Redis's own text.
One connection, one command at a time, or several at once with pipeline(): no pool, no threads, no cluster.
"""

import socket
from urllib.parse import unquote, urlsplit


class RedisError(Exception):
    """An error reply of the server, e.g. BUSYGROUP or NOGROUP, with its text."""


class Redis:
    def __init__(self, url, timeout=30.0):
        """Connects to a redis://[user:password@]host[:port][/db] URL, signs in and selects the database."""
        parts = urlsplit(url)
        if parts.scheme != "redis":
            raise ValueError("this client takes redis:// URLs (no TLS, Sentinel or cluster), got " + url.split("@")[-1])
        host, port = parts.hostname or "127.0.0.1", parts.port or 6379
        try:
            self._sock = socket.create_connection((host, port), timeout)
        except OSError as e:
            raise ConnectionError("cannot connect to Redis at %s:%d: %s" % (host, port, e.strerror or e)) from e
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._in = self._sock.makefile("rb")
        if parts.password is not None:
            auth = ["AUTH", unquote(parts.password)]
            if parts.username:
                auth.insert(1, unquote(parts.username))
            self.call(*auth)
        db = parts.path.strip("/")
        if db and db != "0":
            self.call("SELECT", db)

    def call(self, *args):
        """Sends one command and returns its reply."""
        return self.pipeline([args])[0]

    def pipeline(self, commands):
        """Sends every command in one write, then reads their replies in order; raises the first error reply."""
        self._sock.sendall(b"".join(self._encode(c) for c in commands))
        replies = [self._read() for _ in commands]
        for r in replies:
            if isinstance(r, RedisError):
                raise r
        return replies

    def close(self):
        self._in.close()
        self._sock.close()

    @staticmethod
    def _encode(args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            b = a if isinstance(a, bytes) else str(a).encode("utf-8")
            out.append(b"$%d\r\n%s\r\n" % (len(b), b))
        return b"".join(out)

    def _read(self):
        """One reply; an error reply is returned (not raised) so that the replies after it are still read."""
        line = self._in.readline()
        if not line.endswith(b"\r\n"):
            raise ConnectionError("the connection to Redis closed")
        kind, rest = line[:1], line[1:-2]
        if kind == b"+":
            return rest
        if kind == b"-":
            return RedisError(rest.decode("utf-8", "replace"))
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self._in.read(n + 2)
            return data[:-2]
        if kind == b"*":
            n = int(rest)
            if n < 0:
                return None
            items = [self._read() for _ in range(n)]
            for item in items:   # an error inside an array (e.g. in EXEC's reply) fails the whole reply
                if isinstance(item, RedisError):
                    return item
            return items
        raise ConnectionError("unexpected reply from Redis: %r" % line)

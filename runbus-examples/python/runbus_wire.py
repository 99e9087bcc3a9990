"""runbus's wire format (docs/wire-format.md): key names, partitions and the fields of a message.

Nothing here talks to Redis but Topic.partitions, which reads (and on first use records) a topic's partition count.
"""

import time
import uuid
import zlib

SLOTS = 16384
HEADER_PREFIX = "h:"


def _crc16_table():
    table = []
    for i in range(256):
        c = i << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x1021) if c & 0x8000 else (c << 1)
        table.append(c & 0xFFFF)
    return table


_CRC16 = _crc16_table()


def crc16(data, crc=0):
    """CRC16-CCITT (XMODEM: polynomial 0x1021, initial 0), Redis Cluster's, continued from crc."""
    for b in data:
        crc = ((crc << 8) ^ _CRC16[((crc >> 8) ^ b) & 0xFF]) & 0xFFFF
    return crc


def partition_name(topic, p, n):
    """The name (hash tag) of partition p of n: the topic itself when n is 1, else <topic>#<p>.<k> for the
    smallest k whose Redis Cluster slot is the partition's target slot (docs/wire-format.md, "The name")."""
    if n == 1:
        return topic
    target = (crc16(topic.encode("utf-8")) % SLOTS + p * SLOTS // n) % SLOTS
    stem = "%s#%d." % (topic, p)
    start = crc16(stem.encode("utf-8"))
    k = 0
    while crc16(str(k).encode("ascii"), start) % SLOTS != target:
        k += 1
    return stem + str(k)


def positive(text):
    """A number of at least 1 from the command line (a partition count, a read's size), for argparse."""
    if not text.isdigit() or int(text) < 1:
        raise ValueError("a whole number of at least 1, got %r" % text)
    return int(text)


def partition_of(key, n):
    """The partition of a message key: CRC-32 (zlib's) of its UTF-8 bytes mod n."""
    return zlib.crc32(key.encode("utf-8")) % n


class Topic:
    """The keys of one topic under one key prefix."""

    def __init__(self, prefix, topic, count=1):
        if any(c in topic for c in "{}#") or any(c.isspace() for c in topic) or not topic:
            raise ValueError("a topic name is non-empty, without braces, '#' or whitespace: %r" % topic)
        self.prefix, self.topic, self.count = prefix, topic, count
        self.names = [partition_name(topic, p, count) for p in range(count)]

    @staticmethod
    def partitions(redis, prefix, topic, wanted=None):
        """The topic with its partition count as recorded in Redis (absent means 1). With wanted, a topic that has no
        record yet gets wanted recorded, as a runbus bus records its configured count; a recorded count that differs
        from wanted is refused, since keys would hash onto other partitions."""
        key = "%s:{%s}:partitions" % (prefix, topic)
        recorded = redis.call("GET", key)
        if recorded is None and wanted is not None:
            plain_stream = "%s:{%s}:stream" % (prefix, topic)
            # A stream of one partition already there means the topic has one (partition_count.lua does the same).
            first = 1 if wanted != 1 and redis.call("EXISTS", plain_stream) else wanted
            redis.call("SET", key, first, "NX")
            recorded = redis.call("GET", key)
        n = int(recorded) if recorded is not None else 1
        if wanted is not None and n != wanted:
            raise ValueError("topic %s has %d partition(s) (recorded at %s), not %d" % (topic, n, key, wanted))
        redis.call("SADD", "%s:topics" % prefix, topic)   # so that runbus's inspector lists the topic
        return Topic(prefix, topic, n)

    def key(self, p, suffix):
        """A key of partition p, e.g. key(0, "stream") or key(0, "starts:billing")."""
        return "%s:{%s}:%s" % (self.prefix, self.names[p], suffix)

    def topic_key(self, suffix):
        """A key of the whole topic, e.g. topic_key("heartbeats:billing")."""
        return "%s:{%s}:%s" % (self.prefix, self.topic, suffix)

    def qualify(self, p, stream_id):
        """The id runbus hands out for an entry: <stream id>@<p> on a topic of several partitions."""
        return stream_id if self.count == 1 else "%s@%d" % (stream_id, p)


def encode(message):
    """The fields of a stream entry for a message: a dict with type, payload (bytes) and optionally id, key, headers,
    published_at (epoch ms). The id defaults to a random UUID and the publish time to now, as runbus's do."""
    fields = [
        ("id", message.get("id") or str(uuid.uuid4())),
        ("type", message.get("type", "")),
        ("payload", message.get("payload", b"")),
        ("published_at", str(message.get("published_at") or int(time.time() * 1000))),
    ]
    if message.get("key") is not None:
        if not 1 <= len(message["key"]) <= 1000:
            raise ValueError("a message key has 1 to 1000 characters, got %d" % len(message["key"]))
        fields.append(("key", message["key"]))
    for name, value in (message.get("headers") or {}).items():
        if not name or any(c.isspace() for c in name):
            raise ValueError("a header name is non-empty, without whitespace: %r" % name)
        fields.append((HEADER_PREFIX + name, value))
    return fields


def decode(stream_id, flat):
    """A message from an entry's fields as XREADGROUP returns them ([name, value, name, value, ...], bytes),
    read as leniently as runbus reads them: a missing id is the stream id, a missing publish time the stream
    id's time; fields it does not know are ignored. Text that is not UTF-8 is read with replacement characters, as
    Java reads it."""
    fields = {flat[i].decode("utf-8", "replace"): flat[i + 1] for i in range(0, len(flat), 2)}

    def text(name, default):
        value = fields.get(name)
        return value.decode("utf-8", "replace") if value else default

    published_at = text("published_at", "")
    return {
        "stream_id": stream_id,
        "id": text("id", stream_id),
        "type": text("type", ""),
        "key": text("key", None),
        "published_at": int(published_at) if published_at.isdigit() else int(stream_id.split("-")[0]),
        "headers": {n[len(HEADER_PREFIX):]: v.decode("utf-8", "replace") for n, v in fields.items()
                    if n.startswith(HEADER_PREFIX) and len(n) > len(HEADER_PREFIX)},
        "payload": fields.get("payload") or b"",
        "for_group": text("for_group", None),
        "attempts": text("attempts", None),
    }

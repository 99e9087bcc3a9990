#!/usr/bin/env python3
"""Consumes a runbus topic as a member of a consumer group, beside runbus's Java consumers, following
docs/wire-format.md ("Consuming like runbus"). Python 3.8+, standard library only.

For each message it handles, it prints one JSON line: stream_id (as runbus hands it out, <id>@<p> on a topic of
several partitions), id, type, key, published_at, headers, payload_base64, and payload_text when the payload is
UTF-8. Then it acknowledges the entry. Its handler only prints; --fail-type TYPE makes it fail on messages of a type
instead, to show what a failure does (the entry stays pending, its start counted, for a runbus consumer to take over).

    python3 consumer.py --topic orders --group billing --consumer py-1            # until Ctrl-C or SIGTERM
    python3 consumer.py --topic orders --group billing --consumer py-1 --drain    # stops when nothing new is left

What it does, by those rules:
  - refuses an ordered group (one with live members, <prefix>:{<topic>}:members:<group>, or a partition with a
    lease:<group> or started:<group> key): plain XREADGROUP would break its order;
  - creates the group on every partition's stream when missing (XGROUP CREATE ... 0 MKSTREAM, BUSYGROUP ignored);
  - re-reads its own pending entries first (XREADGROUP ... 0, then after the last id seen), then new ones (>);
  - acks unseen an entry whose for_group names another group, and acks an entry deleted from the stream while
    pending (it comes back without fields) without handling it;
  - records each handler start (HINCRBY of the entry's field of <prefix>:{<name>}:starts:<group>) before the
    handler runs, so that runbus's consumers count the delivery towards maxDeliveries;
  - acks with XACK and the HDEL of that field in one MULTI/EXEC, after the handler succeeded, never on a failure;
  - keeps a heartbeat (ZADD of the Redis server's time every 5 s) and removes it on a clean stop.
What it leaves to runbus's consumers of the group, as the wire format allows: taking over entries idle for minIdle
(its own failures included) and dead-lettering; in a group without them, a failed entry waits for this consumer's
next start. Its handler is short, so it needs no keep-alive (XCLAIM ... JUSTID); a handler that can run for minIdle
(30 s by default) or longer would. It reads one Redis server (redis:// URLs), not a cluster.
"""

import argparse
import base64
import json
import os
import signal
import sys
import time

from resp import Redis, RedisError
from runbus_wire import Topic, decode, positive

HEARTBEAT_SECONDS = 5


class Consumer:
    def __init__(self, redis, topic, group, name, fail_type=None, out=sys.stdout):
        self.redis, self.topic, self.group, self.name = redis, topic, group, name
        self.fail_type, self.out = fail_type, out
        self.streams = [topic.key(p, "stream") for p in range(topic.count)]
        self.starts = [topic.key(p, "starts:" + group) for p in range(topic.count)]
        self.heartbeats = topic.topic_key("heartbeats:" + group)
        self.last_beat = 0.0
        self.stopping = False

    def start(self):
        if self.is_ordered():
            raise SystemExit("consumer: group %s of %s is an ordered group: it is read only through runbus's ordered "
                             "scripts (docs/wire-format.md), not with XREADGROUP" % (self.group, self.topic.topic))
        self.create_groups()
        self.beat(first=True)

    def create_groups(self):
        for stream in self.streams:
            try:
                self.redis.call("XGROUP", "CREATE", stream, self.group, "0", "MKSTREAM")
            except RedisError as e:
                if not str(e).startswith("BUSYGROUP"):
                    raise

    def is_ordered(self):
        """An ordered group has live members, or a partition with a lease or a start record of the ordered kind."""
        keys = [self.topic.topic_key("members:" + self.group)]
        for p in range(self.topic.count):
            keys += [self.topic.key(p, "lease:" + self.group), self.topic.key(p, "started:" + self.group)]
        return self.redis.call("EXISTS", *keys) > 0

    def run(self, drain, block_ms, count):
        """Own pending entries first, partition by partition, then new ones from every partition at once."""
        for p in range(self.topic.count):
            after = "0"
            while not self.stopping:
                entries = self.read(count, None, [self.streams[p]], [after])
                if not entries:
                    break
                for _, stream_id, fields in entries:
                    self.handle(p, stream_id, fields)
                after = entries[-1][1]
                self.beat()
        while not self.stopping:
            entries = self.read(count, None if drain else block_ms, self.streams, [">"] * len(self.streams))
            if not entries and drain:
                break
            for p, stream_id, fields in entries:
                self.handle(p, stream_id, fields)
            self.beat()

    def read(self, count, block_ms, streams, ids):
        args = ["XREADGROUP", "GROUP", self.group, self.name, "COUNT", count]
        if block_ms is not None:
            args += ["BLOCK", block_ms]
        try:
            reply = self.redis.call(*(args + ["STREAMS"] + streams + ids)) or []
        except RedisError as e:
            if not str(e).startswith("NOGROUP"):
                raise
            self.create_groups()   # deleted, or lost with Redis's data: created again at the start, as runbus does
            return []
        entries = []
        for stream, items in reply:
            p = self.streams.index(stream.decode("utf-8"))
            entries += [(p, stream_id.decode("ascii"), fields) for stream_id, fields in items]
        return entries

    def handle(self, p, stream_id, fields):
        if fields is None:   # deleted from the stream while pending: nothing to handle, nothing to keep
            self.ack(p, stream_id)
            print("consumer: entry %s was deleted from the stream while pending; acked" % stream_id, file=sys.stderr)
            return
        message = decode(self.topic.qualify(p, stream_id), fields)
        if message["for_group"] is not None and message["for_group"] != self.group:
            self.ack(p, stream_id)   # a replay or retry addressed to another group: acked unseen
            return
        self.redis.call("HINCRBY", self.starts[p], stream_id, 1)   # the start, before the handler starts
        try:
            self.handler(message)
        except Exception as failure:   # no ack: the entry stays pending, and is delivered again
            print("consumer: %s failed: %s" % (message["stream_id"], failure), file=sys.stderr)
            return
        self.ack(p, stream_id)

    def handler(self, message):
        if message["type"] == self.fail_type:
            raise RuntimeError("messages of type %s fail (--fail-type)" % self.fail_type)
        payload = message["payload"]
        shown = {k: message[k] for k in ("stream_id", "id", "type", "key", "published_at", "headers")}
        shown["payload_base64"] = base64.b64encode(payload).decode("ascii")
        try:
            shown["payload_text"] = payload.decode("utf-8")
        except UnicodeDecodeError:
            pass
        print(json.dumps(shown, ensure_ascii=False), file=self.out, flush=True)

    def ack(self, p, stream_id):
        """XACK and the removal of the entry's start record, together: the record lives as long as the entry is
        pending."""
        self.redis.pipeline([("MULTI",), ("XACK", self.streams[p], self.group, stream_id),
                             ("HDEL", self.starts[p], stream_id), ("EXEC",)])

    def beat(self, first=False):
        if not first and time.monotonic() - self.last_beat < HEARTBEAT_SECONDS:
            return
        seconds, micros = self.redis.call("TIME")   # the Redis server's clock, as every runbus process uses
        now = int(seconds) * 1000 + int(micros) // 1000
        if first:
            before = self.redis.call("ZSCORE", self.heartbeats, self.name)
            if before is not None and now - int(float(before)) < 2 * HEARTBEAT_SECONDS * 1000:
                print("consumer: %s has a heartbeat %d ms old: another live process may use this name, and the two "
                      "would share a pending list" % (self.name, now - int(float(before))), file=sys.stderr)
        self.redis.call("ZADD", self.heartbeats, now, self.name)
        self.last_beat = time.monotonic()

    def stop(self):
        self.redis.call("ZREM", self.heartbeats, self.name)


def main(argv=None):
    parser = argparse.ArgumentParser(description="Consumes a runbus topic in a consumer group (docs/wire-format.md).")
    parser.add_argument("--redis-url", default=os.environ.get("RUNBUS_REDIS_URL", "redis://127.0.0.1:6379"),
                        help="redis://[user:password@]host[:port][/db] (default: $RUNBUS_REDIS_URL, else "
                             "redis://127.0.0.1:6379)")
    parser.add_argument("--key-prefix", default="runbus", help="BusConfig.keyPrefix of the buses (default: runbus)")
    parser.add_argument("--topic", required=True)
    parser.add_argument("--group", required=True)
    parser.add_argument("--consumer", required=True,
                        help="this consumer's name: unique among live processes, stable across restarts")
    parser.add_argument("--partitions", type=positive, default=None,
                        help="the topic's partition count, recorded when the topic has none yet (default: the "
                             "recorded count, else 1)")
    parser.add_argument("--drain", action="store_true", help="stop once no new entry is left, instead of waiting")
    parser.add_argument("--block-ms", type=positive, default=2000, help="how long a read waits for new entries "
                                                                    "(default: 2000)")
    parser.add_argument("--count", type=positive, default=100, help="entries per read (default: 100)")
    parser.add_argument("--fail-type", default=None, help="fail on messages of this type, to show a failure")
    args = parser.parse_args(argv)

    for what, name in (("--group", args.group), ("--consumer", args.consumer)):
        if not 1 <= len(name) <= 200 or any(c.isspace() or not c.isprintable() for c in name):
            parser.error("%s takes 1 to 200 characters without whitespace, got %r" % (what, name))
    try:
        redis = Redis(args.redis_url)
        topic = Topic.partitions(redis, args.key_prefix, args.topic, args.partitions)
    except (ValueError, OSError, RedisError) as e:
        raise SystemExit("consumer: %s" % e)
    consumer = Consumer(redis, topic, args.group, args.consumer, args.fail_type)

    def stop_soon(signum, frame):   # the read in progress ends within --block-ms; its entries are handled first
        consumer.stopping = True
    signal.signal(signal.SIGTERM, stop_soon)
    signal.signal(signal.SIGINT, stop_soon)

    consumer.start()
    try:
        consumer.run(args.drain, args.block_ms, args.count)
    finally:
        consumer.stop()
        redis.close()


if __name__ == "__main__":
    main()

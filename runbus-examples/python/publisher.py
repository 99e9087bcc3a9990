#!/usr/bin/env python3
"""Publishes messages to a runbus topic, as runbus's publisher does (docs/wire-format.md): a plain XADD of the
message's fields to the stream of its partition. Python 3.8+, standard library only.

Reads one JSON object per line on stdin: type, and optionally id, key, headers (an object of strings), and the
payload as payload_text (sent as UTF-8) or payload_base64 (any bytes). Prints one JSON line per message: its
stream_id as runbus hands it out (<id>@<p> on a topic of several partitions), its id and published_at.

    echo '{"type": "order.created", "key": "user-1", "payload_text": "{\\"order\\": 1}"}' \\
        | python3 publisher.py --topic orders

A message with a key goes to partition CRC-32(key) mod N; one without goes round the partitions.
"""

import argparse
import base64
import itertools
import json
import os
import sys

from resp import Redis, RedisError
from runbus_wire import Topic, encode, partition_of, positive


def to_message(line):
    m = json.loads(line)
    if "payload_base64" in m:
        m["payload"] = base64.b64decode(m.pop("payload_base64"), validate=True)
    else:
        m["payload"] = m.pop("payload_text", "").encode("utf-8")
    if not isinstance(m.get("type", ""), str):
        raise ValueError("type must be a string")
    return m


def main(argv=None):
    parser = argparse.ArgumentParser(description="Publishes JSON lines of stdin to a runbus topic.")
    parser.add_argument("--redis-url", default=os.environ.get("RUNBUS_REDIS_URL", "redis://127.0.0.1:6379"),
                        help="redis://[user:password@]host[:port][/db] (default: $RUNBUS_REDIS_URL, else "
                             "redis://127.0.0.1:6379)")
    parser.add_argument("--key-prefix", default="runbus", help="BusConfig.keyPrefix of the buses (default: runbus)")
    parser.add_argument("--topic", required=True)
    parser.add_argument("--partitions", type=positive, default=None,
                        help="the topic's partition count, recorded when the topic has none yet (default: the "
                             "recorded count, else 1)")
    args = parser.parse_args(argv)

    try:
        redis = Redis(args.redis_url)
        topic = Topic.partitions(redis, args.key_prefix, args.topic, args.partitions)
    except (ValueError, OSError, RedisError) as e:
        raise SystemExit("publisher: %s" % e)
    turn = itertools.cycle(range(topic.count))
    for number, line in enumerate(sys.stdin, 1):
        if not line.strip():
            continue
        try:
            message = to_message(line)
            fields = encode(message)
        except (ValueError, TypeError) as e:
            raise SystemExit("publisher: line %d: %s" % (number, e))
        p = partition_of(message["key"], topic.count) if message.get("key") is not None else next(turn)
        stream_id = redis.call("XADD", topic.key(p, "stream"), "*", *[x for f in fields for x in f])
        written = dict(fields)
        print(json.dumps({"stream_id": topic.qualify(p, stream_id.decode("ascii")), "id": written["id"],
                          "published_at": int(written["published_at"])}), flush=True)
    redis.close()


if __name__ == "__main__":
    main()

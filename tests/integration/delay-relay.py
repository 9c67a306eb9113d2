#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A TCP relay that holds every chunk DELAY ms in each direction, in order:
# the link delay of t-hosts-netem.sh where the kernel has no netem.
# Usage: delay-relay.py LISTEN_ADDR:PORT UPSTREAM_ADDR:PORT DELAY_MS LIFETIME_S
#
# Each accepted connection gets its own upstream connection and two pumps;
# a pump stamps each chunk it reads with (arrival + DELAY) and a writer
# sends it at that time, so chunks keep their order and a stream is not
# slowed to one chunk per DELAY. A queue of QUEUE_MAX chunks a direction
# passes back-pressure on to the sender. An EOF is relayed as a half-close
# after the same delay. The relay stops by itself after LIFETIME_S.
# Prints "listening ADDR:PORT" once it accepts, and a count of connections
# at the end.
import asyncio
import socket
import sys

QUEUE_MAX = 256
CHUNK = 65536


def split(hp):
    host, _, port = hp.rpartition(":")
    return host, int(port)


def nodelay(writer):
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


async def pump(reader, writer, delay):
    loop = asyncio.get_running_loop()
    q = asyncio.Queue(QUEUE_MAX)

    async def read():
        try:
            while True:
                b = await reader.read(CHUNK)
                await q.put((loop.time() + delay, b))
                if not b:
                    return
        except OSError:
            await q.put((loop.time(), None))

    async def write():
        while True:
            due, b = await q.get()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if b is None:       # the reading side failed: reset this side too
                writer.transport.abort()
                return
            if not b:
                if writer.can_write_eof():
                    writer.write_eof()
                return
            writer.write(b)
            await writer.drain()

    r = asyncio.ensure_future(read())
    try:
        await write()
    finally:
        r.cancel()


async def main():
    listen, upstream = split(sys.argv[1]), split(sys.argv[2])
    delay, lifetime = int(sys.argv[3]) / 1000.0, float(sys.argv[4])
    count = 0

    async def serve(cr, cw):
        nonlocal count
        count += 1
        nodelay(cw)
        try:
            ur, uw = await asyncio.open_connection(*upstream)
        except OSError:
            cw.transport.abort()
            return
        nodelay(uw)
        try:
            await asyncio.gather(pump(cr, uw, delay), pump(ur, cw, delay))
        except OSError:         # a reset: the other side is reset by close
            pass
        finally:
            cw.close()
            uw.close()

    server = await asyncio.start_server(serve, *listen, reuse_address=True)
    print(f"listening {sys.argv[1]}", flush=True)
    try:
        await asyncio.wait_for(server.serve_forever(), lifetime)
    except asyncio.TimeoutError:
        pass
    print(f"relayed {count} connections", flush=True)


if __name__ == "__main__":
    asyncio.run(main())

# SPDX-License-Identifier: MIT
"""A client of gded's control socket (docs/PARALLEL.md), as qnoded is one:
lib/wire frames (4-byte big-endian length, a JSON object). Every wait is
bounded; a test fails with what came instead."""
import base64
import json
import socket
import struct
import threading
import time

# lib/taskclient.h's TASKCLIENT_IN_START: task.in data (base64 bytes) a
# sender may have out before gded's first task.inack; each inack's bytes
# let it send that much more.
IN_START = 16 << 10


class Ctl:
    def __init__(self, path, timeout=10.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buf = b""
        self.next_id = 1
        self.frames = []   # read but not yet taken
        self.out = {}      # task -> {1: bytes, 2: bytes}
        self.exits = {}    # task -> the task.exit frame
        self.sent = {}     # task -> task.in data sent (base64 bytes)
        self.acked = {}    # task -> of it, acknowledged (task.inack)

    def close(self):
        self.sock.close()

    def send(self, msg):
        body = json.dumps(msg).encode()
        self.sock.sendall(struct.pack(">I", len(body)) + body)

    def send_raw(self, data):
        self.sock.sendall(data)

    def _read_frame(self):
        while True:
            if len(self.buf) >= 4:
                (n,) = struct.unpack(">I", self.buf[:4])
                if len(self.buf) >= 4 + n:
                    body, self.buf = self.buf[4:4 + n], self.buf[4 + n:]
                    return json.loads(body)
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.buf += chunk

    def _take(self, msg):
        """Files task.out and task.exit; other frames are queued."""
        op = msg.get("op")
        if op == "task.out":
            o = self.out.setdefault(msg["task"], {1: b"", 2: b""})
            o[msg["fd"]] += base64.b64decode(msg["data"], validate=True)
        elif op == "task.inack":
            assert msg.get("bytes", 0) > 0, msg
            self.acked[msg["task"]] = self.acked.get(msg["task"], 0) + msg["bytes"]
        elif op == "task.exit":
            assert msg["task"] not in self.exits, "two task.exit for %s" % msg["task"]
            self.exits[msg["task"]] = msg
        else:
            self.frames.append(msg)

    def pump(self):
        """Reads one frame; False at the end of the stream."""
        msg = self._read_frame()
        if msg is None:
            return False
        self._take(msg)
        return True

    def request(self, msg):
        """Sends msg with a new id; returns the reply with that id."""
        msg = dict(msg, id=self.next_id)
        self.next_id += 1
        self.send(msg)
        return self.reply(msg["id"])

    def reply(self, rid):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            for f in self.frames:
                if f.get("id") == rid:
                    self.frames.remove(f)
                    return f
            if not self.pump():
                raise AssertionError("connection closed waiting for reply %d" % rid)
        raise AssertionError("no reply %d" % rid)

    def start(self, task, argv, env=None, cwd=None, stdin=False):
        msg = {"op": "task.start", "task": task, "argv": argv, "stdin": stdin}
        if env is not None:
            msg["env"] = env
        if cwd is not None:
            msg["cwd"] = cwd
        return self.request(msg)

    def stdin(self, task, data, timeout=60):
        """task.in, within the window as qnoded keeps it: in pieces that
        fit what gded granted, waiting for its task.inack, reading frames
        itself from the main thread, or while another thread reads them."""
        deadline = time.monotonic() + timeout
        while True:
            left = IN_START - (self.sent.get(task, 0) - self.acked.get(task, 0))
            if left >= 4 or (not data and left >= 0):
                piece = data[:left // 4 * 3]
                data = data[len(piece):]
                text = base64.b64encode(piece).decode()
                self.sent[task] = self.sent.get(task, 0) + len(text)
                self.send({"op": "task.in", "task": task, "data": text})
                if not data:
                    return
                continue
            if time.monotonic() > deadline or task in self.exits:
                raise AssertionError("%s: no task.inack in %ss (%d sent, %d acknowledged)" %
                                     (task, timeout, self.sent.get(task, 0), self.acked.get(task, 0)))
            if threading.current_thread() is threading.main_thread():
                if not self.pump():
                    raise AssertionError("connection closed waiting for task.inack of %s" % task)
            else:
                time.sleep(0.001)

    def signal(self, task, sig):
        self.send({"op": "task.signal", "task": task, "signal": sig})

    def wait_exit(self, task, timeout=20):
        deadline = time.monotonic() + timeout
        while task not in self.exits:
            if time.monotonic() > deadline:
                raise AssertionError("no task.exit for %s in %ss; output %r" %
                                     (task, timeout, self.out.get(task)))
            if not self.pump():
                raise AssertionError("connection closed before task.exit of %s" % task)
        return self.exits[task]

    def wait_output(self, task, text, fd=1, timeout=20):
        """Until the task's output on fd holds text."""
        deadline = time.monotonic() + timeout
        while text not in self.output(task, fd):
            if time.monotonic() > deadline or task in self.exits:
                raise AssertionError("%s never wrote %r: %r" % (task, text, self.output(task, fd)))
            if not self.pump():
                raise AssertionError("connection closed waiting for output of %s" % task)

    def output(self, task, fd=1):
        return self.out.get(task, {1: b"", 2: b""})[fd].decode(errors="replace")

# SPDX-License-Identifier: MIT
# qpool's frames and auth payloads for the tests' protocol fixtures
# (docs/PROTOCOL.md, "Framing" and "The auth frame"), written as lib/wire.c
# and lib/auth.c write them.
import ipaddress
import json
import struct

TAG = "qpool-auth-2"


def endpoint(sock, local):
    """The server's end of the TCP connection sock as both ends write it:
    local (a server's accepted socket): the address it was reached at;
    else (a client's): the address it reached."""
    addr = sock.getsockname() if local else sock.getpeername()
    host, port = addr[0], addr[1]
    ip = ipaddress.ip_address(host.split("%")[0])
    if ip.version == 6 and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    return ("%s:%d" if ip.version == 4 else "[%s]:%d") % (ip.compressed, port)


def client_payload(sock, server_nonce, client_nonce):
    return "%s client %s %s %s" % (TAG, server_nonce, client_nonce, endpoint(sock, False))


def server_payload(sock, client_nonce, server_nonce):
    return "%s server %s %s %s" % (TAG, client_nonce, server_nonce, endpoint(sock, True))


def client_words_ok(sock, words, server_nonce):
    """Whether a decoded client payload's words were made for this
    connection (its hello's nonce, this server end)."""
    return len(words) == 5 and words[:3] == [TAG, "client", server_nonce] and words[4] == endpoint(sock, True)


def send(s, obj):
    b = json.dumps(obj).encode()
    s.sendall(struct.pack(">I", len(b)) + b)


def recv(s):
    def exact(n):
        b = b""
        while len(b) < n:
            c = s.recv(n - len(b))
            if not c:
                return None
            b += c
        return b
    h = exact(4)
    if h is None:
        return None
    b = exact(struct.unpack(">I", h)[0])
    return None if b is None else json.loads(b)

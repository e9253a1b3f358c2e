"""The lab's body limit holds on the bytes actually read, whatever the transfer encoding.

Regression of the bad-input campaign: the limit checked only ``Content-Length``, so a
chunked 50 MB body (no such header) was read and parsed in full (+615 MB RSS per request).
"""

from __future__ import annotations

import json
import select
import socket

from tumble.lab import api

#: How much a client may push before the server has answered: the server reads one chunk
#: past the limit, then the loopback socket buffers hold what was in flight.
IN_FLIGHT = 1 << 20


def chunks(total: int, size: int = 4096):
    sent = 0
    while sent < total:
        yield b" " * size
        sent += size


def test_regression_chunked_body_over_the_limit_answers_413(client) -> None:
    r = client.post(
        "/api/simulate",
        content=chunks(4 * api.MAX_BODY_BYTES),
        headers={"content-type": "application/json"},
    )
    assert "content-length" not in r.request.headers  # chunked
    assert r.status_code == 413
    assert f"more than {api.MAX_BODY_BYTES} bytes" in r.json()["message"]


def test_chunked_body_within_the_limit_is_served(client) -> None:
    body = json.dumps({"methods": ["jolt"], "rotations": 1}).encode()
    r = client.post(
        "/api/simulate",
        content=iter([body[:5], body[5:]]),
        headers={"content-type": "application/json"},
    )
    assert "content-length" not in r.request.headers
    assert r.status_code == 200, r.text


def test_regression_chunked_50_mb_body_is_cut_off_early(live_server) -> None:
    # A real server over a socket: the answer must come while the client is still sending,
    # long before the 50 MB are through.
    total, piece = 50 << 20, b"x" * 16384
    sent = 0
    response = b""
    with socket.create_connection(("127.0.0.1", live_server.port), timeout=30) as sock:
        sock.sendall(
            b"POST /api/simulate HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        try:
            while sent < total:
                sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
                sent += len(piece)
                if select.select([sock], [], [], 0.02)[0]:
                    break
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed: read what it said
        try:
            while b"\r\n\r\n" not in response:
                data = sock.recv(65536)
                if not data:
                    break
                response += data
        except ConnectionResetError:
            pass
    assert response.startswith(b"HTTP/1.1 413"), response[:200]
    assert sent <= IN_FLIGHT, f"sent {sent} bytes before the server answered"

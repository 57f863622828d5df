"""CoalescingTransport: one loop turn's writes reach the transport as one piece, in order.

The transport below it is a recording one (the collaborator the wrapper is given), or a
real loopback TCP connection for what the peer receives.
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

from kubeprio.serve.coalescing import CoalescingTransport


class RecordingTransport:
    """What the wrapper hands on: each write, and the closing calls, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, bytes]] = []
        self.closing = False
        self.buffered = 0

    def write(self, data: bytes) -> None:
        self.calls.append(("write", bytes(data)))

    def close(self) -> None:
        self.calls.append(("close", b""))
        self.closing = True

    def abort(self) -> None:
        self.calls.append(("abort", b""))
        self.closing = True

    def write_eof(self) -> None:
        self.calls.append(("write_eof", b""))

    def is_closing(self) -> bool:
        return self.closing

    def get_write_buffer_size(self) -> int:
        return self.buffered


def _wrap() -> tuple[CoalescingTransport, RecordingTransport]:
    below = RecordingTransport()
    return CoalescingTransport(cast(asyncio.Transport, below)), below


def test_writes_of_one_loop_turn_reach_the_transport_as_one_piece_in_order() -> None:
    async def scenario() -> None:
        wrapper, below = _wrap()
        wrapper.write(b"HTTP/1.1 201 Created\r\n\r\n")
        wrapper.write(bytearray(b'{"kind":'))
        wrapper.write(memoryview(b'"Pod"}'))
        assert below.calls == []  # nothing before the turn ends
        assert wrapper.get_write_buffer_size() == 24 + 8 + 6
        await asyncio.sleep(0)
        assert below.calls == [("write", b'HTTP/1.1 201 Created\r\n\r\n{"kind":"Pod"}')]
        assert wrapper.get_write_buffer_size() == 0
        wrapper.write(b"next")
        await asyncio.sleep(0)
        assert below.calls[1:] == [("write", b"next")]

    asyncio.run(scenario())


def test_close_and_write_eof_send_what_is_gathered_first_abort_drops_it() -> None:
    async def scenario() -> None:
        wrapper, below = _wrap()
        wrapper.write(b"a")
        wrapper.write_eof()
        wrapper.write(b"b")
        wrapper.close()
        assert below.calls == [("write", b"a"), ("write_eof", b""), ("write", b"b"), ("close", b"")]
        assert wrapper.is_closing()
        wrapper.write(b"after close")  # dropped, as a closed transport drops it
        await asyncio.sleep(0)
        assert below.calls[-1] == ("close", b"")

        wrapper, below = _wrap()
        wrapper.write(b"never sent")
        wrapper.abort()
        await asyncio.sleep(0)
        assert below.calls == [("abort", b"")]

    asyncio.run(scenario())


def test_nothing_is_written_once_the_transport_below_is_closing() -> None:
    async def scenario() -> None:
        wrapper, below = _wrap()
        wrapper.write(b"late")
        below.closing = True  # the peer went away during the turn
        await asyncio.sleep(0)
        assert below.calls == []
        assert wrapper.is_closing()

    asyncio.run(scenario())


def test_a_peer_receives_every_byte_in_order_over_a_real_connection() -> None:
    async def scenario() -> None:
        received: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()

        class Sender(asyncio.Protocol):
            def connection_made(self, transport: Any) -> None:
                wrapper = CoalescingTransport(transport)
                for index in range(100):
                    wrapper.write(f"{index},".encode())
                wrapper.close()

        server = await asyncio.get_running_loop().create_server(Sender, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        received.set_result(await reader.read())
        writer.close()
        server.close()
        await server.wait_closed()
        assert received.result() == "".join(f"{i}," for i in range(100)).encode()

    asyncio.run(scenario())

"""One HTTP/2 request to a deployment (h2c, prior knowledge) whose body and answer flow at the same time: the
protocol proxy's stream to the agent (`paidtwice.agent._proxy`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from paidtwice.engine import HOST

__all__ = ["H2Stream", "StreamClosed"]


class StreamClosed(Exception):
    """The agent's side of the stream is gone (killed, or reset)."""


class H2Stream:
    """One HTTP/2 request to the agent (h2c, prior knowledge) whose body and answer flow at the same time.

    httpx sends a request's whole body before it reads the answer; the service protocol needs both at once.
    """

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        import h2.config
        import h2.connection

        self._reader = reader
        self._writer = writer
        self._conn = h2.connection.H2Connection(
            config=h2.config.H2Configuration(client_side=True, header_encoding=None)
        )
        self._headers: asyncio.Future[tuple[int, list[tuple[bytes, bytes]]]] = (
            asyncio.get_running_loop().create_future()
        )
        self._data: asyncio.Queue[bytes | BaseException | None] = asyncio.Queue()
        self._window = asyncio.Event()
        self._closed = False
        self._reading: asyncio.Future[None] | None = None

    @classmethod
    async def open(cls, port: int, path: str, headers: list[tuple[str, str]]) -> H2Stream:
        reader, writer = await asyncio.open_connection(HOST, port)
        stream = cls(reader, writer)
        stream._conn.initiate_connection()
        request = [
            (":method", "POST"),
            (":scheme", "http"),
            (":authority", f"{HOST}:{port}"),
            (":path", path),
        ]
        stream._conn.send_headers(1, [*request, *((k.lower(), v) for k, v in headers)])
        stream._flush()
        stream._reading = asyncio.ensure_future(stream._read())
        return stream

    def _flush(self) -> None:
        data = self._conn.data_to_send()
        if data and not self._writer.is_closing():
            self._writer.write(data)

    async def _read(self) -> None:
        import h2.events

        ended = False
        try:
            while not ended:
                data = await self._reader.read(65536)
                if not data:
                    break
                for event in self._conn.receive_data(data):
                    if isinstance(event, h2.events.ResponseReceived) and not self._headers.done():
                        headers = [(bytes(k), bytes(v)) for k, v in event.headers]
                        status = int(dict(headers).get(b":status", b"502"))
                        self._headers.set_result((status, headers))
                    elif isinstance(event, h2.events.DataReceived):
                        self._conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                        self._data.put_nowait(bytes(event.data))
                    elif isinstance(event, h2.events.WindowUpdated):
                        self._window.set()
                    elif isinstance(event, h2.events.StreamEnded):
                        ended = True
                    elif isinstance(event, h2.events.StreamReset | h2.events.ConnectionTerminated):
                        break
                self._flush()
        except Exception:  # noqa: BLE001 - any failure of the agent's side ends the stream, as a break
            pass
        finally:
            self._closed = True
            if not self._headers.done():
                self._headers.set_exception(StreamClosed("the agent closed the stream before answering"))
            self._data.put_nowait(None if ended else StreamClosed("the agent's stream broke"))
            self._window.set()

    async def response(self) -> tuple[int, list[tuple[bytes, bytes]]]:
        return await self._headers

    async def chunks(self) -> AsyncIterator[bytes]:
        while True:
            chunk = await self._data.get()
            if chunk is None:
                return
            if isinstance(chunk, BaseException):
                raise chunk
            yield chunk

    async def send(self, data: bytes) -> None:
        while data:
            if self._closed:
                raise StreamClosed("the agent's stream is closed")
            window = min(self._conn.local_flow_control_window(1), self._conn.max_outbound_frame_size)
            if window <= 0:
                self._window.clear()
                await self._window.wait()
                continue
            self._conn.send_data(1, data[:window])
            data = data[window:]
            self._flush()
            await self._writer.drain()

    async def end(self) -> None:
        if not self._closed:
            self._conn.end_stream(1)
            self._flush()
            await self._writer.drain()

    def reset(self) -> None:
        if not self._closed:
            try:
                self._conn.reset_stream(1)
                self._flush()
            except Exception:  # noqa: BLE001 - already closed by the peer
                pass

    def close(self) -> None:
        if self._reading is not None:
            self._reading.cancel()
        self._writer.close()

"""HTTP/2 across the link: one multiplexed connection per origin (h2), with Chromium's
own flow-control settings, so the strategy's windows match a browser's. With a cleartext
strategy it speaks h2 with prior knowledge (RFC 9113 3.3)."""

from __future__ import annotations

import time

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings

from pagebench.core import modes
from pagebench.edge.connection import READ_SIZE, Connection, Job, Origin
from pagebench.edge.messages import HOP_BY_HOP, ConnectionRecord, Request, Response, UpstreamError

#: Chromium's own HTTP/2 settings, so the h2 strategy's flow control matches a browser's.
H2_STREAM_WINDOW = 6 * 1024 * 1024
H2_CONNECTION_WINDOW = 15 * 1024 * 1024


def request_headers(request: Request, scheme: str, authority: str) -> list[tuple[str, str]]:
    """The request's HTTP/2 header list: pseudo-headers first, then its own headers in
    lower case, less those of one hop and any pseudo-header it brought."""
    headers = [(":method", request.method), (":scheme", scheme), (":authority", authority),
               (":path", request.path)]
    headers += [(name.lower(), value) for name, value in request.headers
                if name.lower() not in HOP_BY_HOP and not name.startswith(":")]
    return headers


class H2Connection(Connection):
    """One HTTP/2 connection carrying every request to its origin."""

    protocol = modes.H2.upstream_protocol or ""
    protocol_errors = (h2.exceptions.ProtocolError,)

    def __init__(self, pool: Origin, record: ConnectionRecord) -> None:
        # Headers come from Chromium and nginx as they are: checking them again in Python
        # would only add to the proxy's cost per request.
        config = h2.config.H2Configuration(client_side=True, header_encoding="utf-8", validate_outbound_headers=False,
                                           normalize_outbound_headers=False, validate_inbound_headers=False,
                                           normalize_inbound_headers=False)
        self.h2 = h2.connection.H2Connection(config)
        self.max_streams = 100  # until the server's SETTINGS say otherwise
        self.streams: dict[int, Job] = {}
        self.partial: dict[int, tuple[int, list[tuple[str, str]], list[bytes]]] = {}
        super().__init__(pool, record)

    def capacity(self, job: Job) -> int:
        return self.max_streams

    async def _serve(self) -> None:
        reader, self.writer = await self._open([self.protocol])
        tls = self.writer.get_extra_info("ssl_object")
        if tls is not None and tls.selected_alpn_protocol() != self.protocol:
            raise UpstreamError(f"{self.pool.host}: the server did not negotiate {self.protocol}")
        self.h2.local_settings = h2.settings.Settings(client=True, initial_values={
            h2.settings.SettingCodes.ENABLE_PUSH: 0,
            h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: H2_STREAM_WINDOW,
            h2.settings.SettingCodes.HEADER_TABLE_SIZE: 65536,
        })
        self.h2.initiate_connection()
        self.h2.increment_flow_control_window(H2_CONNECTION_WINDOW - 65535)
        for job in self.in_flight:
            self._send(job)
        self._write()
        while True:
            data = await reader.read(READ_SIZE)
            if not data:
                return
            for event in self.h2.receive_data(data):
                self._event(event)
            self._write()
            if not self.reusable and not self.in_flight:
                return

    def _write(self) -> None:
        data = self.h2.data_to_send()
        if data and self.writer is not None:
            self.writer.write(data)

    def _send(self, job: Job) -> None:
        job.exchange.sent_at = time.time()
        request = job.request
        stream = self.h2.get_next_available_stream_id()
        scheme = "http" if self.pool.strategy.cleartext else "https"
        self.h2.send_headers(stream, request_headers(request, scheme, self.pool.host), end_stream=not request.body)
        if request.body:
            self.h2.send_data(stream, request.body, end_stream=True)
        self.streams[stream] = job
        self._write()

    def _event(self, event: h2.events.Event) -> None:
        if isinstance(event, h2.events.ResponseReceived):
            headers = [(str(k), str(v)) for k, v in event.headers]
            status = int(dict(headers)[":status"])
            self.partial[event.stream_id] = (status, [(k, v) for k, v in headers if not k.startswith(":")], [])
        elif isinstance(event, h2.events.DataReceived):
            if event.stream_id in self.partial:
                self.partial[event.stream_id][2].append(event.data)
            self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.StreamEnded):
            job = self.streams.pop(event.stream_id, None)
            status, headers, body = self.partial.pop(event.stream_id, (502, [], []))
            if job is not None:
                self.in_flight.remove(job)
                self.pool.answered(self, job, Response(status, tuple(headers), b"".join(body)))
        elif isinstance(event, h2.events.StreamReset):
            job = self.streams.pop(event.stream_id, None)
            self.partial.pop(event.stream_id, None)
            if job is not None:
                self.in_flight.remove(job)
                self.pool.retry(job, f"stream reset ({event.error_code})")
        elif isinstance(event, h2.events.RemoteSettingsChanged):
            changed = event.changed_settings.get(h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS)
            if changed is not None:
                self.max_streams = changed.new_value
        elif isinstance(event, h2.events.ConnectionTerminated):
            self.reusable = False

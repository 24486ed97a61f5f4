"""A chat call's whole-call deadline and the sockets an HTTP client opened.

httpx's timeout applies to each read alone, so a server trickling a few bytes a second could hold a call
for ever; ``_Call.expire`` (run by a timer) shuts the call's sockets down, which wakes a thread blocked on
any read, and ``_OpenSockets.shutdown`` ends every call in flight (Ctrl-C, a cancelled cluster task).
Split from ``backends``, which uses them for every request.
"""
from __future__ import annotations

import socket
import threading
import weakref


class _Call:
    """One request's whole-call deadline: ``expire`` (run by a timer after ``timeout`` seconds) shuts
    down the sockets the request uses (module docstring)."""

    def __init__(self):
        self._sockets: list = []
        self._lock = threading.Lock()
        self.expired = self.finished = False

    def add(self, sock) -> None:
        with self._lock:
            self._sockets.append(sock)
            late = self.expired and not self.finished
        if late:
            _shutdown(sock)

    def expire(self) -> None:
        with self._lock:
            if self.finished:
                return
            self.expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shutdown(sock)

    def finish(self) -> None:
        with self._lock:
            self.finished = True


def _shutdown(sock) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:         # already closed
        pass


class _OpenSockets:
    """The sockets an HTTP client opened, found through httpx's request and response hooks and
    httpcore's ``trace`` extension and the response's ``network_stream`` (all public), so ``shutdown``
    can end the calls in flight and a call's deadline can end that call: closing an httpx client does not
    wake a thread blocked reading a reply, shutting its socket down does. The hooks run in the calling
    thread, so the call being made there (``current``) learns its own sockets."""

    def __init__(self):
        self._sockets: weakref.WeakSet = weakref.WeakSet()
        self._lock = threading.Lock()
        self._local = threading.local()

    @property
    def current(self) -> _Call | None:
        return getattr(self._local, "call", None)

    @current.setter
    def current(self, call: _Call | None) -> None:
        self._local.call = call

    def _remember(self, sock, call: _Call | None) -> None:
        if sock is None:
            return
        with self._lock:
            self._sockets.add(sock)
        if call is not None:
            call.add(sock)

    def on_request(self, request) -> None:
        call = self.current

        def trace(event: str, info: dict) -> None:
            if event == "connection.connect_tcp.complete":
                self._remember(info["return_value"].get_extra_info("socket"), call)
        request.extensions["trace"] = trace

    def on_response(self, response) -> None:
        stream = response.extensions.get("network_stream")
        if stream is not None:                  # a connection from the pool: now known to be this call's
            self._remember(stream.get_extra_info("socket"), self.current)

    def shutdown(self) -> int:
        with self._lock:
            sockets = list(self._sockets)
        for sock in sockets:
            _shutdown(sock)
        return len(sockets)

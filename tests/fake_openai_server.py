"""A tiny OpenAI-compatible HTTP server for tests: stdlib only, on 127.0.0.1, OS-chosen port.

Written for the project (not a library) because tests must run offline with no model: it lets a
test script exactly what "the LLM" replies, including errors and slowness.

Usage::

    from fake_openai_server import FakeOpenAIServer, Reply, fake_openai   # fake_openai: pytest fixture

    with FakeOpenAIServer() as server:             # started here, stopped on exit
        server.base_url                            # "http://127.0.0.1:<port>/v1"
        server.queue('{"answer": "Paris"}',        # served first, one per request, in order
                     Reply(status=429),            #   an HTTP error (OpenAI-style error body)
                     Reply('{"answer": "x"}', delay=2.0, usage=(120, 7)))
        server.responder = lambda req: ...         # used when the queue is empty
        server.requests                            # JSON bodies of the chat requests received
        server.headers                             # their HTTP headers (dicts), same order
        server.delay = 0.3                         # seconds added to every chat reply (a model's latency)
        server.peak_in_flight                      # most chat requests it was answering at one moment

Endpoints:
- ``POST /v1/chat/completions``: the next queued reply, else ``responder(request_json)``, else a
  400 error saying nothing was scripted. A queued item or responder result may be
  a ``str`` (the assistant message content), a ``dict``/``list`` (sent as JSON content), or a ``Reply``.
  ``"n": k`` in the request gives k identical choices. ``"stream": true`` is refused (400).
- ``GET /v1/models``: one model, ``server.model``.
- ``POST /v1/embeddings``: deterministic 64-dimensional hashed bag-of-words vectors, L2-normalised
  (texts that share words get similar vectors), for judges that also need embeddings.

``Reply(content=None, status=200, delay=0.0, usage=True, body=None, headers=None, tool_calls=None,
finish_reason="stop", raw=None, content_type="application/json", trickle=None, echo_key=False)``:
- ``delay``: seconds to wait before answering (to trigger client timeouts);
- ``usage``: True -> counted as whitespace-separated words (prompt: all message contents;
  completion: the content), ``(prompt, completion)`` -> those numbers, ``None`` -> no usage field;
- ``body``: a full JSON body sent verbatim (overrides everything else);
- ``tool_calls``: list of ``(name, arguments_dict)`` for clients that ask for function calls;
- non-200 ``status``: an OpenAI-style ``{"error": {...}}`` body with ``content`` as its message;
- ``raw``: bytes (or text) sent verbatim as the body with ``content_type`` (a proxy's HTML page, cut JSON);
- ``trickle``: bytes per second: the body is sent that slowly (headers at once), as a stalled proxy does;
- ``echo_key``: the error message repeats the key the request carried (as some proxies and local
  servers do in their 401/429/500 bodies).
"""
from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

import pytest

EMBEDDING_DIM = 64


@dataclass
class Reply:
    content: Any = None
    status: int = 200
    delay: float = 0.0
    usage: Any = True
    body: Any = None
    headers: dict | None = None
    tool_calls: list | None = None
    finish_reason: str = "stop"
    raw: Any = None
    content_type: str = "application/json"
    trickle: float | None = None
    echo_key: bool = False


def _words(text: Any) -> int:
    if isinstance(text, list):  # content parts
        return sum(_words(p.get("text", "")) for p in text if isinstance(p, dict))
    return len(str(text or "").split())


def _embed(text: str) -> list[float]:
    vec = [0.0] * EMBEDDING_DIM
    for word in str(text).lower().split():
        vec[int(hashlib.md5(word.strip(".,;:!?\"'()").encode()).hexdigest(), 16) % EMBEDDING_DIM] += 1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


class FakeOpenAIServer:
    def __init__(self, responder: Callable[[dict], Any] | None = None, model: str = "fake-model"):
        self.responder = responder
        self.model = model
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self._queue: deque = deque()
        self._lock = threading.Lock()
        self._counter = 0
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.delay = 0.0
        self.in_flight = 0
        self.peak_in_flight = 0

    def _enter(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    # -- scripting --
    def queue(self, *replies) -> "FakeOpenAIServer":
        with self._lock:
            self._queue.extend(replies)
        return self

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("fake OpenAI server is not running; use it as a context manager")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    # -- lifecycle --
    def start(self) -> "FakeOpenAIServer":
        handler = type("Handler", (_Handler,), {"fake": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._thread.join(timeout=5)
            self._httpd = None

    def __enter__(self) -> "FakeOpenAIServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- answering --
    def _next_reply(self, request: dict, headers: dict) -> Reply:
        with self._lock:
            self.requests.append(request)
            self.headers.append(headers)
            item = self._queue.popleft() if self._queue else None
        if item is None and self.responder is not None:
            item = self.responder(request)
        if item is None:
            return Reply("fake server: nothing scripted for this request (queue a reply or set a responder)",
                         status=400)
        if isinstance(item, Reply):
            return item
        if isinstance(item, (dict, list)):
            return Reply(json.dumps(item))
        return Reply(str(item))

    def _chat_body(self, request: dict, reply: Reply) -> dict:
        with self._lock:
            self._counter += 1
            n = self._counter
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = [{"id": f"call_{n}_{i}", "type": "function",
                                      "function": {"name": name, "arguments": json.dumps(args)}}
                                     for i, (name, args) in enumerate(reply.tool_calls)]
        k = int(request.get("n") or 1)
        body = {"id": f"chatcmpl-fake-{n}", "object": "chat.completion", "created": int(time.time()),
                "model": request.get("model", self.model),
                "choices": [{"index": i, "message": message, "finish_reason": reply.finish_reason, "logprobs": None}
                            for i in range(k)]}
        if reply.usage is True:
            prompt = sum(_words(m.get("content")) for m in request.get("messages", []))
            completion = _words(reply.content) * k
            body["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion,
                             "total_tokens": prompt + completion}
        elif reply.usage:
            prompt, completion = reply.usage
            body["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion,
                             "total_tokens": prompt + completion}
        return body


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAIServer

    def log_message(self, *args) -> None:  # keep test output clean
        pass

    def _send(self, status: int, body: Any, headers: dict | None = None, raw: Any = None,
              content_type: str = "application/json", trickle: float | None = None) -> None:
        data = json.dumps(body).encode() if raw is None else raw if isinstance(raw, bytes) else str(raw).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, str(v))
            self.end_headers()
            if not trickle:
                self.wfile.write(data)
                return
            step = max(1, int(trickle / 8))              # eight writes a second
            for i in range(0, len(data), step):
                self.wfile.write(data[i:i + step])
                self.wfile.flush()
                time.sleep(step / trickle)
        except (BrokenPipeError, ConnectionResetError, OSError):  # the client gave up (a timeout test)
            pass

    def _error(self, status: int, message: str, headers: dict | None = None) -> None:
        self._send(status, {"error": {"message": message, "type": "fake_error", "code": status}}, headers)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._send(200, {"object": "list", "data": [{"id": self.fake.model, "object": "model",
                                                          "created": 0, "owned_by": "fake"}]})
        else:
            self._error(404, f"fake server: no route GET {self.path}")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            request = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            return self._error(400, "fake server: the request body is not JSON")
        path = self.path.rstrip("/")
        if path.endswith("/embeddings"):
            inputs = request.get("input")
            inputs = [inputs] if isinstance(inputs, str) else list(inputs or [])
            return self._send(200, {"object": "list", "model": request.get("model", self.fake.model),
                                    "data": [{"object": "embedding", "index": i, "embedding": _embed(t)}
                                             for i, t in enumerate(inputs)],
                                    "usage": {"prompt_tokens": sum(_words(t) for t in inputs),
                                              "total_tokens": sum(_words(t) for t in inputs)}})
        if not path.endswith("/chat/completions"):
            return self._error(404, f"fake server: no route POST {self.path}")
        if request.get("stream"):
            return self._error(400, "fake server: streaming is not supported")
        self.fake._enter()
        try:
            reply = self.fake._next_reply(request, dict(self.headers.items()))
            if reply.delay or self.fake.delay:
                time.sleep(reply.delay + self.fake.delay)
            if reply.body is not None or reply.raw is not None:
                return self._send(reply.status, reply.body, reply.headers, reply.raw, reply.content_type, reply.trickle)
            if reply.status != 200:
                message = str(reply.content or f"fake error {reply.status}")
                if reply.echo_key:
                    message += f" (you sent {self.headers.get('Authorization', '').removeprefix('Bearer ')!r})"
                return self._error(reply.status, message, reply.headers)
            self._send(200, self.fake._chat_body(request, reply), reply.headers, trickle=reply.trickle)
        finally:
            self.fake._leave()


@pytest.fixture
def fake_openai():
    """A running FakeOpenAIServer, stopped after the test."""
    with FakeOpenAIServer() as server:
        yield server

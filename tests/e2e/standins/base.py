"""What every stand-in shares: a threaded HTTP server on 127.0.0.1, a log
of the requests it answered, and failures queued for the next calls."""

import http.server
import json
import socket
import ssl
import threading
import time
import urllib.parse


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # The headers and the body are two writes: with Nagle's algorithm the
    # body waited for the client's delayed ACK, about 40 ms a call on a
    # kept-alive connection (test_catchup's 1,003 pages took a minute).
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):  # noqa: D102 - quiet
        pass

    def _serve(self, method):
        st = self.server.standin
        u = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(u.query, keep_blank_values=True)
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        req = {"method": method, "path": u.path, "query": query,
               "headers": {k.lower(): v for k, v in self.headers.items()},
               "body": body, "at": time.monotonic()}
        with st.lock:
            st.requests.append(req)
            fail = st.failures.pop(0) if st.failures else None
        if st.delay:
            time.sleep(st.delay)
        if fail is not None:
            status, headers, payload = fail
        else:
            status, headers, payload = st.route(req)
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        req["status"] = status
        req["answer"] = payload
        req["answer_headers"] = dict(headers or {})
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        # A client that gave up first (a stall the test set up, past the
        # caller's timeout) is recorded, not printed as a traceback.
        try:
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            req["client_gone"] = True

    def do_GET(self):  # noqa: N802
        self._serve("GET")

    def do_POST(self):  # noqa: N802
        self._serve("POST")

    def do_PUT(self):  # noqa: N802
        self._serve("PUT")

    def do_DELETE(self):  # noqa: N802
        self._serve("DELETE")


class Standin:
    """Subclasses define route(req) -> (status, headers, json-able body)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.requests = []
        self.failures = []      # (status, headers, body) for the next calls
        self.delay = 0.0
        self.httpd = None
        self.thread = None

    def start(self, port=0, tls=None):
        """tls: (certfile, keyfile) to serve https instead."""
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        if tls is not None:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*tls)
            self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
            self.scheme = "https"
        self.httpd.daemon_threads = True
        self.httpd.standin = self
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        return self

    scheme = "http"

    @property
    def base(self):
        return "%s://127.0.0.1:%d" % (self.scheme, self.port)

    def stop(self):
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()
            self.httpd = None

    def fail_next(self, status, headers=None, body=None):
        with self.lock:
            self.failures.append((status, headers or {}, body if body is not None
                                  else {"error": {"message": "stand-in failure"}}))

    def calls(self, path=None):
        with self.lock:
            return [r for r in self.requests if path is None or r["path"] == path]


def serve_forever(standin, port):
    """For running a stand-in by hand (the README's recipe)."""
    standin.start(port)
    print("stand-in on %s" % standin.base, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        standin.stop()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

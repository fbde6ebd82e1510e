"""An API that misbehaves below HTTP's shapes, for the client's limits:
it accepts and never answers ("stall"), claims an answer longer than the
client keeps ("huge", Content-Length only, nothing sent), or streams one
without a length ("stream", chunked until the client hangs up)."""

import socket
import threading


class RawStandin:
    def __init__(self, mode):
        self.mode = mode
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.conns = []
        self.stopped = False

    @property
    def base(self):
        return "http://127.0.0.1:%d" % self.port

    def start(self):
        threading.Thread(target=self._loop, daemon=True).start()
        return self

    def _loop(self):
        while not self.stopped:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            self.conns.append(c)
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c):
        try:
            c.settimeout(30)
            c.recv(65536)
            if self.mode == "stall":
                return
            if self.mode == "huge":
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                          b"Content-Length: 41943040\r\n\r\n{")
                return
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                      b"Transfer-Encoding: chunked\r\n\r\n")
            chunk = b"%x\r\n%s\r\n" % (1 << 20, b" " * (1 << 20))
            for _ in range(40):
                c.sendall(chunk)
        except OSError:
            pass

    def stop(self):
        self.stopped = True
        self.sock.close()
        for c in self.conns:
            try:
                c.close()
            except OSError:
                pass

"""A reverse proxy on 127.0.0.1, as a deployment puts in front of the web server: it passes each request
on over HTTP and says whom it came from in `X-Forwarded-For` (the address that connected to it), as
nginx's `proxy_add_x_forwarded_for` does. Tests reach it from several loopback addresses (127.0.0.2,
127.0.0.3: Linux routes all of 127/8 to the loopback) to be several clients."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx2

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "content-length"}
HOP_BY_HOP |= {"content-encoding"}  # httpx2 hands over the body decoded


class ForwardingProxy:
    def __init__(self, upstream: str) -> None:
        self.upstream = httpx2.Client(base_url=upstream, timeout=120, follow_redirects=False, trust_env=False)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def _forward(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
                earlier = self.headers.get("X-Forwarded-For")
                client = self.client_address[0]
                headers["X-Forwarded-For"] = f"{earlier}, {client}" if earlier else client
                answer = proxy.upstream.request(self.command, self.path, headers=headers, content=body)
                self.send_response(answer.status_code)
                for name, value in answer.headers.multi_items():
                    if name.lower() not in HOP_BY_HOP:
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

            do_GET = do_POST = _forward

            def log_message(self, format, *args) -> None:  # quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "ForwardingProxy":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.upstream.close()

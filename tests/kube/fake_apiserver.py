#!/usr/bin/env python3
"""A fake Kubernetes API server on 127.0.0.1 for the client's tests (standard library only).

    fake_apiserver.py --cert server.crt --key server.key [--token T] [--client-ca ca.crt] [--plain]

Prints "PORT <n>" on stdout once it listens, then serves until killed or until its stdin ends (the
test that started it keeps a pipe open there). Requests must carry
"Authorization: Bearer T" when --token is given (else 401, a Kubernetes Status). With --client-ca a
client certificate is asked for (optional) and GET /whoami says whose it is.

Control endpoints (no token needed, not logged):
  POST /_script {"path": P, "responses": [{"status": 503, "retry_after": "1", "delay": 0.5,
                 "body": {...}}, ...]}    the next requests to path P get these answers, in order
  POST /_watch  {"path": P, "events": [...], "delay": 0.02, "split": true,
                 "end": "close" | "cut" | "hold", "hold": 10}
                a watch of P streams these events (chunked, one JSON per line; split: each event in
                two chunks), then ends the stream, cuts it in the middle of an event, or holds it open
                for `hold` seconds
  GET  /_log    {"requests": [{"method", "path", "query", "t", "authorized"}]}  (t: time.monotonic())
Default answers: GET /version, GET /api/v1/nodes (two nodes), GET /whoami, POST (201, the object back
with a resourceVersion), DELETE (200, a Success Status with the request's propagationPolicy), anything
else 404 NotFound.
"""
import argparse
import json
import os
import ssl
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
SCRIPTS = {}  # path -> [response, ...]
WATCHES = {}  # path -> watch config
LOG = []
ARGS = None


def status_body(code, reason, message):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet
        pass

    def handle(self):
        if isinstance(self.request, ssl.SSLSocket):
            try:
                self.request.do_handshake()
            except (ssl.SSLError, OSError):
                return  # a client that does not trust us, or that went away
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, TimeoutError):
            pass

    def send_json(self, code, obj, headers=None):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def do_GET(self):
        self.serve("GET")

    def do_POST(self):
        self.serve("POST")

    def do_DELETE(self):
        self.serve("DELETE")

    def do_PUT(self):
        self.serve("PUT")

    def serve(self, method):
        url = urllib.parse.urlsplit(self.path)
        path, query = url.path, urllib.parse.parse_qs(url.query)
        body = self.read_body()
        if path == "/_script":
            req = json.loads(body)
            with LOCK:
                SCRIPTS.setdefault(req["path"], []).extend(req["responses"])
            return self.send_json(200, {})
        if path == "/_watch":
            req = json.loads(body)
            with LOCK:
                WATCHES[req["path"]] = req
            return self.send_json(200, {})
        if path == "/_log":
            with LOCK:
                return self.send_json(200, {"requests": list(LOG)})

        authorized = not ARGS.token or self.headers.get("Authorization") == "Bearer " + ARGS.token
        with LOCK:
            LOG.append({"method": method, "path": path, "query": url.query, "t": time.monotonic(),
                        "authorized": authorized})
        if not authorized:
            return self.send_json(401, status_body(401, "Unauthorized", "Unauthorized"))

        with LOCK:
            script = SCRIPTS.get(path)
            scripted = script.pop(0) if script else None
        if scripted is not None:
            time.sleep(scripted.get("delay", 0))
            headers = {"Retry-After": scripted["retry_after"]} if "retry_after" in scripted else {}
            code = scripted["status"]
            default = status_body(code, "Scripted", "scripted answer %d" % code)
            return self.send_json(code, scripted.get("body", default), headers)

        if method == "GET" and query.get("watch") == ["1"]:
            return self.serve_watch(path)
        if method == "GET" and path == "/version":
            return self.send_json(200, {"major": "1", "minor": "36", "gitVersion": "v1.36.3-fake"})
        if method == "GET" and path == "/api/v1/nodes":
            return self.send_json(200, {"kind": "NodeList", "apiVersion": "v1",
                                        "metadata": {"resourceVersion": "7"},
                                        "items": [{"metadata": {"name": "node-0"}},
                                                  {"metadata": {"name": "node-1"}}]})
        if method == "GET" and path == "/whoami":
            cert = self.request.getpeercert() if isinstance(self.request, ssl.SSLSocket) else None
            cn = None
            for rdn in (cert or {}).get("subject", ()):
                for k, v in rdn:
                    if k == "commonName":
                        cn = v
            return self.send_json(200, {"client_cert_cn": cn})
        if method == "POST":
            obj = json.loads(body)
            obj.setdefault("metadata", {})["resourceVersion"] = "1"
            return self.send_json(201, obj)
        if method == "DELETE":
            opts = json.loads(body) if body else {}
            return self.send_json(200, {"kind": "Status", "apiVersion": "v1", "status": "Success",
                                        "details": {"propagationPolicy": opts.get("propagationPolicy")}})
        name = path.rstrip("/").split("/")[-1]
        return self.send_json(404, status_body(404, "NotFound", 'pods "%s" not found' % name))

    def serve_watch(self, path):
        with LOCK:
            cfg = WATCHES.get(path, {"events": []})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        def chunk(data):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        for ev in cfg["events"]:
            time.sleep(cfg.get("delay", 0))
            line = json.dumps(ev).encode() + b"\n"
            if cfg.get("split"):
                chunk(line[: len(line) // 2])
                time.sleep(cfg.get("delay", 0))
                chunk(line[len(line) // 2:])
            else:
                chunk(line)
        end = cfg.get("end", "close")
        if end == "cut":
            chunk(b'{"type": "ADDED", "obj')  # half an event, then the connection goes
            self.close_connection = True
            self.request.close()  # with TLS, no close_notify: as a crashed server or a cut network
            return
        if end == "hold":
            until = time.monotonic() + cfg.get("hold", 10)
            while time.monotonic() < until:
                time.sleep(0.05)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--cert")
    p.add_argument("--key")
    p.add_argument("--token", default="")
    p.add_argument("--client-ca")
    p.add_argument("--plain", action="store_true")
    ARGS = p.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    if not ARGS.plain:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(ARGS.cert, ARGS.key)
        if ARGS.client_ca:
            ctx.load_verify_locations(ARGS.client_ca)
            ctx.verify_mode = ssl.CERT_OPTIONAL
        server.socket = ctx.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    # Ends when the test that started it ends: its stdin is a pipe from the test, at EOF then.
    def watch_parent():
        sys.stdin.buffer.read()
        os._exit(0)
    threading.Thread(target=watch_parent, daemon=True).start()
    print("PORT %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())

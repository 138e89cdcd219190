#!/usr/bin/env python3
"""Serves the git repositories under ROOT over HTTPS on 127.0.0.1 for tests:
each request runs the real `git http-backend` (CGI), behind Python's TLS.

Usage: https_git_server.py ROOT CERT KEY READY_FILE [--stall-after BYTES]
                           [--proxy-log FILE]
Writes "PORT" (and " PROXY_PORT" with --proxy-log) to READY_FILE once both
listen. --stall-after: the first git-upload-pack response stops after BYTES of
its body and the connection then hangs (a transfer cut mid-way); a line
"stalled" is appended to READY_FILE.stall. --proxy-log: also runs an HTTP
CONNECT proxy (plain HTTP, as HTTPS_PROXY=http://... names it) that appends
"CONNECT host:port" to FILE for each tunnel. Runs until killed.
"""
import argparse
import http.server
import os
import socket
import ssl
import subprocess
import threading
import time

GIT_HTTP_BACKEND = "/usr/lib/git-core/git-http-backend"


def read_body(handler):
    """Returns the request body, de-chunked when Transfer-Encoding is chunked."""
    if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
        body = b""
        while True:
            size = int(handler.rfile.readline().split(b";")[0].strip(), 16)
            if size == 0:
                handler.rfile.readline()
                return body
            body += handler.rfile.read(size)
            handler.rfile.readline()
    return handler.rfile.read(int(handler.headers.get("Content-Length", "0")))


class GitHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    stall_after = None  # bytes; set on the class, cleared after the first stall
    stall_lock = threading.Lock()

    def log_message(self, fmt, *args):  # quiet: the test's output is the client's
        pass

    def do_GET(self):
        self.run_backend(b"")

    def do_POST(self):
        self.run_backend(read_body(self))

    def run_backend(self, body):
        path, _, query = self.path.partition("?")
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": self.server.root,
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": self.client_address[0],
            "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
            "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
        }
        out = subprocess.run([GIT_HTTP_BACKEND], input=body, env=env, capture_output=True, check=False).stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        status = 200
        headers = []
        for line in head.split(b"\r\n"):
            name, _, value = line.decode("latin-1").partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        stall = None
        if path.endswith("/git-upload-pack"):
            with GitHandler.stall_lock:
                stall, GitHandler.stall_after = GitHandler.stall_after, None
        if stall is not None and len(payload) > stall:
            self.wfile.write(payload[:stall])
            self.wfile.flush()
            with open(self.server.ready_file + ".stall", "a", encoding="utf-8") as f:
                f.write("stalled\n")
            while True:  # hangs until the client gives up or the server is killed
                time.sleep(3600)
        self.wfile.write(payload)


class ProxyHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        pass

    def do_CONNECT(self):
        host, _, port = self.path.rpartition(":")
        with open(self.server.log, "a", encoding="utf-8") as f:
            f.write(f"CONNECT {self.path}\n")
        upstream = socket.create_connection((host, int(port)))
        self.send_response(200, "Connection established")
        self.end_headers()
        self.wfile.flush()

        def pump(src, dst):
            try:
                while data := src.recv(65536):
                    dst.sendall(data)
            except OSError:
                pass
            finally:
                dst.close()

        threading.Thread(target=pump, args=(upstream, self.connection), daemon=True).start()
        pump(self.connection, upstream)
        self.close_connection = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("cert")
    ap.add_argument("key")
    ap.add_argument("ready_file")
    ap.add_argument("--stall-after", type=int)
    ap.add_argument("--proxy-log")
    a = ap.parse_args()
    GitHandler.stall_after = a.stall_after

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), GitHandler)
    server.daemon_threads = True
    server.root = os.path.abspath(a.root)
    server.ready_file = a.ready_file
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    ports = [str(server.server_address[1])]
    if a.proxy_log:
        proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), ProxyHandler)
        proxy.daemon_threads = True
        proxy.log = a.proxy_log
        threading.Thread(target=proxy.serve_forever, daemon=True).start()
        ports.append(str(proxy.server_address[1]))
    tmp = a.ready_file + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(" ".join(ports) + "\n")
    os.rename(tmp, a.ready_file)
    server.serve_forever()


if __name__ == "__main__":
    main()

"""gunicorn settings for the reference lab: the metrics server runs in the master (which
serves no request, so a scrape answers while every worker is busy), summing the workers'
multiprocess files, plus the listen socket's accept queue read from the kernel.

Behind nginx (METABENCH_NGINX_STATUS_URL names its stub_status), received is nginx's count,
as orchestrator/lab/local/referenceMetrics.ts gives it for PHP-FPM: once gunicorn's accept
queue is full, the kernel drops the connections past it before gunicorn can count them, where
nginx has already read their requests. gunicorn's own count is kept as
gunicorn_requests_received_total. The local runtime (referenceGunicorn.ts) and the Docker
image (docker/offline/reference-entrypoint.sh) both serve their /metrics from here."""
import http.client
import os
import re
import threading
from urllib.parse import urlsplit
from wsgiref.simple_server import WSGIRequestHandler, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.exposition import ThreadingWSGIServer
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead

HOST = os.environ.get("METABENCH_HOST", "127.0.0.1")
PORT = int(os.environ["METABENCH_PORT"])
METRICS_HOST = os.environ.get("METABENCH_METRICS_HOST", HOST)
METRICS_PORT = int(os.environ["METABENCH_METRICS_PORT"])
NGINX_STATUS_URL = os.environ.get("METABENCH_NGINX_STATUS_URL")


def accept_queue(host, port):
    """Connections waiting in the listen socket's accept queue, or None where the kernel
    does not say. A sync worker accepts only when it is free, so this is the queue of
    requests no worker has taken yet. /proc/net/tcp gives a listening socket's current
    accept queue as its rx_queue (Linux)."""
    want = "%s:%04X" % ("".join("%02X" % int(b) for b in reversed(host.split("."))), port)
    try:
        with open("/proc/net/tcp") as f:
            next(f)
            for line in f:
                parts = line.split()
                if parts[1] == want and parts[3] == "0A":  # 0A: LISTEN
                    return int(parts[4].split(":")[1], 16)
    except (OSError, ValueError, IndexError):
        return None
    return None


class NginxReceived:
    """What the lab received, as nginx counts it: its requests (stub_status, counted when nginx
    reads a request: exact, and at arrival) less the status requests made here through nginx.
    Each is counted once connected, before it is sent: nginx counts it as it reads it, whether
    or not its answer arrives in time. One at a time, so no read sees another's request."""

    def __init__(self, url):
        parts = urlsplit(url)
        self.host, self.port, self.path = parts.hostname, parts.port or 80, parts.path or "/"
        self.own = 0
        self.lock = threading.Lock()

    def received(self):
        with self.lock:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=2)
            try:
                conn.connect()  # refused: nginx read nothing, there is nothing to count
                self.own += 1
                conn.request("GET", self.path)
                res = conn.getresponse()
                text = res.read().decode("utf-8", "replace")
            except OSError as e:
                raise OSError("nginx's status page (%s:%d%s): %s" % (self.host, self.port, self.path, e)) from e
            finally:
                conn.close()
            m = re.search(r"server accepts handled requests\s+(\d+)\s+(\d+)\s+(\d+)", text)
            if res.status != 200 or not m:
                raise ValueError("nginx's stub_status page is not as expected: %d %r" % (res.status, text[:80]))
            return int(m.group(3)) - self.own


class QueueCollector:
    """api_queue_depth from the kernel, and received counted when a request reaches the
    socket rather than when a worker takes it (workers' count plus the queue now), or, behind
    nginx, nginx's count."""

    def __init__(self, multiprocess, nginx):
        self.multiprocess = multiprocess
        self.nginx = nginx

    def collect(self):
        queue = accept_queue(HOST, PORT)
        for family in self.multiprocess.collect():
            if family.name == "api_requests_received" and (queue is not None or self.nginx):
                total = sum(s.value for s in family.samples if s.name.endswith("_total"))
                c = CounterMetricFamily(
                    "gunicorn_requests_received" if self.nginx else "api_requests_received",
                    "Requests that reached gunicorn's listen socket (taken by a worker, or waiting in its accept queue)",
                )
                c.add_metric([], total + (queue or 0))
                yield c
            else:
                yield family
        if queue is not None:
            g = GaugeMetricFamily("api_queue_depth", "Connections waiting in the listen socket's accept queue")
            g.add_metric([], queue)
            yield g
        if self.nginx:
            # Read last: received is never behind the completions read above.
            c = CounterMetricFamily("api_requests_received", "Requests nginx read (its stub_status), less its status reads")
            c.add_metric([], self.nginx.received())
            yield c


class QuietHandler(WSGIRequestHandler):
    def log_message(self, *args):
        pass  # a line per scrape would drown the server's log


def metrics_app(registry):
    """prometheus_client's /metrics, answering 503 with the reason when a figure cannot be read
    (nginx not answering yet): a failed scrape, not a series silently missing."""
    app = make_wsgi_app(registry)

    def guarded(environ, start_response):
        try:
            return app(environ, start_response)
        except Exception as e:  # pylint: disable=broad-except
            start_response("503 Service Unavailable", [("Content-Type", "text/plain; charset=utf-8")])
            return [("%s\n" % e).encode()]

    return guarded


def when_ready(server):
    registry = CollectorRegistry()
    nginx = NginxReceived(NGINX_STATUS_URL) if NGINX_STATUS_URL else None
    registry.register(QueueCollector(MultiProcessCollector(registry=None), nginx))
    httpd = make_server(METRICS_HOST, METRICS_PORT, metrics_app(registry), ThreadingWSGIServer, handler_class=QuietHandler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()


def child_exit(server, worker):
    mark_process_dead(worker.pid)

"""gunicorn settings for the reference lab: the metrics server runs in the master (which
serves no request, so a scrape answers while every worker is busy), summing the workers'
multiprocess files, plus the listen socket's accept queue read from the kernel."""
import os

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead

HOST = os.environ.get("METABENCH_HOST", "127.0.0.1")
PORT = int(os.environ["METABENCH_PORT"])
METRICS_PORT = int(os.environ["METABENCH_METRICS_PORT"])


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


class QueueCollector:
    """api_queue_depth from the kernel, and received counted when a request reaches the
    socket rather than when a worker takes it (workers' count plus the queue now)."""

    def __init__(self, multiprocess):
        self.multiprocess = multiprocess

    def collect(self):
        queue = accept_queue(HOST, PORT)
        for family in self.multiprocess.collect():
            if family.name == "api_requests_received" and queue is not None:
                total = sum(s.value for s in family.samples if s.name.endswith("_total"))
                c = CounterMetricFamily(
                    "api_requests_received",
                    "Requests that reached the listen socket (taken by a worker, or waiting in its accept queue)",
                )
                c.add_metric([], total + queue)
                yield c
            else:
                yield family
        if queue is not None:
            g = GaugeMetricFamily("api_queue_depth", "Connections waiting in the listen socket's accept queue")
            g.add_metric([], queue)
            yield g


def when_ready(server):
    registry = CollectorRegistry()
    registry.register(QueueCollector(MultiProcessCollector(registry=None)))
    start_http_server(METRICS_PORT, addr=HOST, registry=registry)


def child_exit(server, worker):
    mark_process_dead(worker.pid)

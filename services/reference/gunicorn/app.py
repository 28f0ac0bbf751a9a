"""The gunicorn reference lab's WSGI app: every path is one request of declared work
(METABENCH_WORK_MS of sleep, after METABENCH_CPU_MS of CPU), so c sync workers serve
c / S requests per second. /health does no work, but is counted like any request (received
and completed): behind nginx, whose count of requests is what the lab received, a health
check through nginx is one more request it read, which a worker answered.

Server-side figures (prometheus_client's multiprocess mode: each worker writes its
counters to files in PROMETHEUS_MULTIPROC_DIR, the master serves their sum; see
gunicorn_conf.py): received and completed per worker, busy workers as a live sum.
"""
import os
import time

from prometheus_client import Counter, Gauge

WORK_S = float(os.environ.get("METABENCH_WORK_MS", "0")) / 1000.0
CPU_S = float(os.environ.get("METABENCH_CPU_MS", "0")) / 1000.0

# The bench's series names (orchestrator/scrape/scraper.ts), so the bench reads them as the api's.
RECEIVED = Counter("api_requests_received", "Requests a worker took from the listen socket")
COMPLETED = Counter("api_requests_completed", "Requests a worker answered")
BUSY = Gauge("api_busy_workers", "Workers serving a request", multiprocess_mode="livesum")


def application(environ, start_response):
    RECEIVED.inc()
    if environ.get("PATH_INFO") == "/health":
        COMPLETED.inc()
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "3")])
        return [b"ok\n"]
    BUSY.inc()
    try:
        if CPU_S > 0:
            until = time.perf_counter() + CPU_S
            x = 0
            while time.perf_counter() < until:
                x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        if WORK_S > 0:
            time.sleep(WORK_S)
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "3")])
        return [b"ok\n"]
    finally:
        BUSY.dec()
        COMPLETED.inc()

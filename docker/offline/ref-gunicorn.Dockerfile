# The gunicorn reference lab as an image (issue 34, point 3): Debian bookworm's gunicorn with c
# sync workers running services/reference/gunicorn/app.py, and python3-prometheus-client for its
# metrics, started by reference-entrypoint.sh from METABENCH_* settings (see there) as on the
# local runtime. Port 8080: the load (/health does no work); 9100: /metrics (the master's, summing
# the workers' multiprocess files; the accept queue from the kernel's /proc/net/tcp).
ARG BASE
FROM ${BASE}
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends gunicorn python3-prometheus-client \
    && apt-get clean && rm -rf /var/lib/apt/lists/* /usr/share/doc /usr/share/man && gunicorn --version
COPY gunicorn /opt/metabench/reference/gunicorn
COPY reference-entrypoint.sh /usr/local/bin/reference-entrypoint.sh
EXPOSE 8080 9100
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/reference-entrypoint.sh", "gunicorn"]

# Stands in for the official prom/prometheus:v2.53.0 image (docker-compose.yml's default) where no
# image registry is reachable. Alike where a trigger or the lab can see it: prometheus as the entry
# point, user nobody, /prometheus as the working directory and a VOLUME, port 9090, SIGTERM as the
# stop signal, wget for the healthcheck (busybox's in the official image).
# Differs: Debian bookworm's Prometheus 2.42 (not 2.53.0), at /usr/bin/prometheus (not /bin/prometheus);
# a full Debian userland instead of busybox.
ARG BASE
FROM ${BASE}
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus wget \
    && rm -rf /var/lib/apt/lists/* && mkdir -p /prometheus /etc/prometheus && chown nobody:nogroup /prometheus
VOLUME /prometheus
USER nobody
WORKDIR /prometheus
EXPOSE 9090
ENTRYPOINT ["/usr/bin/prometheus"]
CMD ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus"]

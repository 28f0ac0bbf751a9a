# Stands in for the official redis:7.2.5 image (docker-compose.yml's default) where no image
# registry is reachable. Alike where a trigger or the lab can see it: `redis-server ARGS` as the
# command, /data as the working directory and a VOLUME, port 6379, SIGTERM as the stop signal (the
# official image sets none either), redis-cli for the healthcheck.
# Differs: Debian bookworm's Redis 7.0 (not 7.2.5); no entry point script (the official one only
# drops root and chowns /data, here it runs as the redis user from the start).
ARG BASE
FROM ${BASE}
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends redis-server \
    && rm -rf /var/lib/apt/lists/* && mkdir -p /data && chown redis:redis /data
VOLUME /data
USER redis
WORKDIR /data
EXPOSE 6379
CMD ["redis-server", "--protected-mode", "no"]

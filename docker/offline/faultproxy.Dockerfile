# Stands in for the official ghcr.io/shopify/toxiproxy:2.12.0 image (docker-compose.yml's default)
# where no image registry is reachable: our fault proxy (Toxiproxy 2.12's HTTP API and toxics) on
# the api image. Alike: the entry points /toxiproxy (Go-style flags: -host, -port, -config) and
# /toxiproxy-cli (only `list`, what the compose healthcheck runs), port 8474, SIGTERM as the stop
# signal. Differs: no /metrics (-proxy-metrics and -runtime-metrics are accepted and ignored);
# a Node.js process on Debian instead of a static Go binary on scratch.
ARG API_IMAGE
FROM ${API_IMAGE}
COPY toxiproxy toxiproxy-cli /
ENTRYPOINT ["/toxiproxy"]
CMD ["-host=0.0.0.0"]

# Stands in for the official node:20-bookworm-slim image (docker/api/Dockerfile's base) where no
# image registry is reachable: this machine's Node.js binary and its npm on a debootstrapped
# Debian bookworm root (Debian's own nodejs is 18). Alike: Debian bookworm, node and npm on the
# PATH, /app. Differs: the Node.js 20 release and npm version are this machine's (npm 11 here,
# the official image ships npm 10); node is the entry point (the official image's entry point
# script ends in the same `node`); ca-certificates and wget are added.
ARG BASE
FROM ${BASE}
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ca-certificates wget \
    && rm -rf /var/lib/apt/lists/* && ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
    && node --version && npm --version && mkdir /app
WORKDIR /app
ENTRYPOINT ["node"]

# The machine's own Node.js binary on the debootstrapped Debian root (Debian bookworm's nodejs is 18).
ARG BASE
FROM ${BASE}
COPY node /usr/local/bin/node
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ca-certificates wget \
    && rm -rf /var/lib/apt/lists/* && node --version

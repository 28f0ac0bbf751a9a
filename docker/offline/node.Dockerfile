# The machine's own Node.js binary on the debootstrapped Debian root (Debian bookworm's nodejs is 18),
# with the app's settings, so the api image on top is a single COPY (each build step copies the
# whole root on the vfs storage driver).
ARG BASE
FROM ${BASE}
COPY node /usr/local/bin/node
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ca-certificates wget \
    && rm -rf /var/lib/apt/lists/* && node --version && mkdir /app
WORKDIR /app
ENV NODE_ENV=production
ENTRYPOINT ["node"]
CMD ["dist/services/api/main.js", "--host", "0.0.0.0", "--port", "8080"]

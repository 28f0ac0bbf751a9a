# The build stage's image for docker/api/Dockerfile offline: the Node.js stand-in with the
# lockfile's node_modules (this checkout's, installed by `npm ci`) in /app, so the Dockerfile's
# `npm ci` is skipped; npm is kept offline so nothing after it can reach for a registry.
ARG NODE_IMAGE
FROM ${NODE_IMAGE}
ENV npm_config_offline=true
COPY node_modules /app/node_modules

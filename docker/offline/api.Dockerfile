# The api and the llm-stub (one image, two commands): the repository's built dist/, its
# node_modules and package.json, under /app (the node image sets the entry point and command).
ARG NODE_IMAGE
FROM ${NODE_IMAGE}
COPY app /app

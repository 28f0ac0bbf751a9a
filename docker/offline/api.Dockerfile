# The api and the llm-stub (one image, two commands): the repository's built dist/ and its node_modules.
ARG NODE_IMAGE
FROM ${NODE_IMAGE}
WORKDIR /app
COPY package.json ./
COPY node_modules ./node_modules
COPY dist ./dist
ENV NODE_ENV=production
ENTRYPOINT ["node"]
CMD ["dist/services/api/main.js", "--host", "0.0.0.0", "--port", "8080"]

# docflow-api: the service on Node 24 LTS, built in a first stage, run in a
# second from the bundle with production dependencies only. Validated by hadolint in CI.
# Build: docker build -t docflow-api .    Run: docker run -e MONGODB_URI=... -p 8080:8080 docflow-api

FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts: the image's own Node 24 runs the build (the npm "node" package is not needed here).
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY gen ./gen
COPY src ./src
RUN npm run build

FROM node:24-slim
# MALLOC_ARENA_MAX=2: fewer glibc arenas, less native memory kept (docs/performance.md, "Memory").
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    MALLOC_ARENA_MAX=2
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only: no dev tooling, no embedded database, no install scripts.
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund \
    && npm cache clean --force
COPY --from=build /app/dist ./dist
# The official image's unprivileged user, by number so that runtimes can check it.
USER 1000:1000
EXPOSE 8080
STOPSIGNAL SIGTERM
# No HEALTHCHECK: orchestrators probe /livez and /readyz themselves (deploy/kubernetes,
# compose.yaml), and a Docker HEALTHCHECK would need a shell or curl the slim image lacks.
HEALTHCHECK NONE
CMD ["node", "--enable-source-maps", "--max-semi-space-size=8", "--heap-growing-percent=80", "dist/main.js"]

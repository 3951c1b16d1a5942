# syntax=docker/dockerfile:1
# Node 24 (LTS). Multi-stage: compile TypeScript and better-sqlite3 in a build stage with a toolchain, ship only the
# compiled server, the migrations and production dependencies, running as the unprivileged `node` user.

FROM node:24-bookworm-slim AS build
# better-sqlite3 is compiled from source against this exact Node and glibc, not fetched prebuilt.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# package.json's postinstall; on this image's Node 24 it only checks that better-sqlite3 loads.
COPY scripts/node24.sh ./scripts/node24.sh
RUN npm ci --no-audit --no-fund --build-from-source
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# `probnes demo` drives its server through the TypeScript client.
COPY clients/typescript/src ./clients/typescript/src
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATABASE_PATH=/data/probnes.db
WORKDIR /app
COPY --from=build --chown=root:root /app/package.json ./package.json
COPY --from=build --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist ./dist
COPY --chown=root:root migrations ./migrations
# The dashboard's static files (served as they are, no build step).
COPY --chown=root:root src/ui ./dist/src/ui
# The CLI (keys, backup, demo) on the PATH: `docker compose exec probnes probnes keys create --tenant acme`.
# Without src/*.ts in the image, bin/probnes.js runs the compiled dist/src/cli/main.js.
COPY --chown=root:root bin ./bin
RUN ln -s /app/bin/probnes.js /usr/local/bin/probnes
# The code is read-only to the server; only /data is writable.
RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]
USER node
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node is PID 1 here and handles SIGTERM itself (graceful shutdown, exit 0). 16 MiB semi-spaces: the event
# loop's young generation stays at most 48 MiB instead of V8's 192 (docs/capacity.md, "Memory: every cache bounded").
CMD ["node", "--max-semi-space-size=16", "dist/src/server.js"]

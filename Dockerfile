# One image for every Dossier process; the command picks the app:
#   gateway (default)   node dist/apps/gateway/src/main.js
#   worker              node dist/apps/worker/src/main.js
#   CLI                 node dist/apps/cli/src/main.js <command>
# Built once by docker-compose.yml's `migrate` service; see docs/deployment.md.

# Build: every dependency, the sources the apps are compiled from, `nest build`.
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY apps ./apps
COPY libs ./libs
RUN npm run build

# Production dependencies only: a fresh install from the lock file, without devDependencies.
FROM node:22-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# Runtime: compiled apps and production dependencies, run as the image's unprivileged user.
FROM node:22-bookworm-slim
ENV NODE_ENV=production
# V8's young generation, AsyncLocalStorage's implementation and glibc's malloc arenas are chosen before
# the apps' code runs: every launcher sets these (appNodeFlags and APP_PROCESS_ENV in
# libs/runtime/src/heap.ts; ADR 0029, ADR 0033). A NODE_OPTIONS of your own replaces this one: keep the
# flags in it. Node 24 and later refuse --experimental-async-context-frame (they always do what it asks).
ENV NODE_OPTIONS="--max-semi-space-size=8 --experimental-async-context-frame" MALLOC_ARENA_MAX=2
WORKDIR /app
COPY --from=deps /app/package.json ./package.json
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The image's built-in unprivileged user (uid 1000); the app writes nothing to disk.
USER node
EXPOSE 3000
CMD ["node", "dist/apps/gateway/src/main.js"]

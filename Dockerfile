# One image for every Dossier process; the command picks the app:
#   gateway (default)   node dist/apps/gateway/src/main.js
#   worker              node dist/apps/worker/src/main.js
#   CLI                 node dist/apps/cli/src/main.js <command>

FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:22-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The image's built-in unprivileged user; the app writes nothing to disk.
USER node
EXPOSE 3000
CMD ["node", "dist/apps/gateway/src/main.js"]

# syntax=docker/dockerfile:1
# The app image: built with the dev dependencies, run with the production ones only, as the
# unprivileged `node` user. Webhooks and GET /healthz on 3000, the internal DevBox API on 8080.
# The current Node.js LTS; the code itself still runs on Node 20.19 (package.json engines).
ARG NODE_VERSION=26

FROM node:${NODE_VERSION}-trixie-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No lifecycle scripts: `prepare` would run tsc before the sources are here.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM node:${NODE_VERSION}-trixie-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts keeps `prepare` (tsc, a dev dependency) from running here.
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY workflows-schema ./workflows-schema
USER node
EXPOSE 3000 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:3000/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# As `npm start` runs it: a young generation of 4 MB semi-spaces instead of V8's 16 MB, which the
# app's short-lived garbage never needs (about 25 MB less resident; docs/benchmarks.md).
CMD ["node", "--max-semi-space-size=4", "dist/github/main.js"]

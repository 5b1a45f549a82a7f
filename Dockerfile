# syntax=docker/dockerfile:1
# The repoadmin server image. The build stage makes the same archive as `npm pack`; the run stage
# installs only that archive (its run-time modules are bundled inside) and runs as the user "node".
# Configuration: the REPO_MAN_* variables (README, "Configuration").
ARG NODE_VERSION=22

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm pack --ignore-scripts --pack-destination /tmp

FROM node:${NODE_VERSION}-bookworm-slim AS run
ENV NODE_ENV=production \
    REPO_MAN_PORT=9090 \
    REPO_MAN_DATA_DIR=/var/lib/repoadmin
COPY --from=build /tmp/repoadmin-*.tgz /tmp/
RUN npm install --global --offline --no-audit --no-fund /tmp/repoadmin-*.tgz \
    && rm /tmp/repoadmin-*.tgz \
    && npm cache clean --force \
    && mkdir -p /var/lib/repoadmin \
    && chown node:node /var/lib/repoadmin
USER node
WORKDIR /home/node
# The embedded database (REPO_MAN_DB_JDBC=pglite, the default); unused with PostgreSQL.
VOLUME /var/lib/repoadmin
EXPOSE 9090
# Slim images have no curl: Node asks /health/ready, which also checks the database.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.REPO_MAN_PORT || 9090) + '/health/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Node is PID 1 and handles SIGTERM itself: requests in flight finish, the database closes, exit 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["repoadmin"]
CMD ["server"]

# syntax=docker/dockerfile:1
# The repoadmin server image. The build stage makes the same archive as `npm pack` and installs it
# into /opt/repoadmin (its run-time modules are bundled inside); the run stage copies only that
# folder, so no archive layer stays behind, and runs as the user "node" (uid 1000).
# Configuration: the REPO_MAN_* variables (docs/api.md, "Configuration"); docs/images.md.
ARG NODE_VERSION=22

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build \
    && npm pack --ignore-scripts --pack-destination /tmp \
    && npm install --global --prefix /opt/repoadmin --offline --no-audit --no-fund /tmp/repoadmin-*.tgz

FROM node:${NODE_VERSION}-bookworm-slim AS run
ENV NODE_ENV=production \
    PATH=/opt/repoadmin/bin:$PATH \
    REPO_MAN_PORT=9090 \
    REPO_MAN_DATA_DIR=/var/lib/repoadmin \
    REPO_MAN_REQUIRE_ADMIN_PASSWORD=true
COPY --from=build /opt/repoadmin /opt/repoadmin
# The embedded database's folder: the image's user only (a bind mount must belong to uid 1000).
RUN install -d -m 0700 -o node -g node /var/lib/repoadmin
USER node
WORKDIR /home/node
# The embedded database (REPO_MAN_DB_JDBC=pglite, the default); unused with PostgreSQL.
VOLUME /var/lib/repoadmin
EXPOSE 9090
# Slim images have no curl: Node asks /health/ready, which also checks the database. Every 5 s, so
# "healthy" shows within 5 s of readiness.
HEALTHCHECK --interval=5s --timeout=4s --start-period=60s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.REPO_MAN_PORT || 9090) + '/health/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Node is PID 1 and handles SIGTERM itself: requests in flight finish, the database closes, exit 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["repoadmin"]
CMD ["server"]

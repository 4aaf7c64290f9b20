# rowbridge worker image.
#   docker build -t rowbridge .
#   docker run --env-file .env rowbridge            # a worker; see compose.yaml for the rest
# The dashboard (`node bin/rowbridge.js dashboard --host 0.0.0.0`) refuses to start in a
# container without ROWBRIDGE_DASHBOARD_TOKEN or ROWBRIDGE_DASHBOARD_USERS in that .env.
# Node 24 runs the TypeScript sources directly (type stripping): there is no build step,
# so the image is the production dependencies plus src/, config/ and jobs/.

FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# --omit=optional too: typescript is a devDependency and an optional peer of valibot
# (through @bull-board/api), which npm flags devOptional and --omit=dev alone keeps (24 MB).
# The other optional packages are not needed here: pg-cloudflare is for Cloudflare Workers,
# and msgpackr decodes in JavaScript without msgpackr-extract (test/security/production-tree.test.ts).
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund && npm cache clean --force

FROM node:24-slim
# The compile cache keeps Node's type-stripped code between starts (bin/rowbridge.js
# turns it on): without it every start loads an 18 MB compiler. /tmp is the node user's.
# glibc's malloc as docs/deployment.md recommends (read once, as a process starts, so it is
# set here rather than by rowbridge): two arenas (each thread that mallocs,
# V8's compiler and GC helpers, otherwise gets its own and keeps what was freed in it), and
# blocks of 128 KB or more given back at once; a 1M-row import peaked about 30 MB lower
# with both, at the same CPU (bench/README.md, sessions 6 and 7).
ENV NODE_ENV=production \
    OPS_PORT=9464 \
    NODE_COMPILE_CACHE=/tmp/node-compile-cache \
    MALLOC_ARENA_MAX=2 \
    MALLOC_TRIM_THRESHOLD_=131072 \
    MALLOC_MMAP_THRESHOLD_=131072
WORKDIR /app
# Owned by root and only readable by the node user: the process cannot change its own code.
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY config ./config
COPY src ./src
COPY jobs ./jobs
USER node
EXPOSE 9464
# No curl in slim images: node's fetch asks the worker's ops server. Change OPS_PORT
# together with --ops-port when overriding the command.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.OPS_PORT || 9464) + '/healthz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# 0.0.0.0: Prometheus scrapes /metrics from outside the container.
CMD ["node", "bin/rowbridge.js", "worker", "--ops-port", "9464", "--host", "0.0.0.0"]

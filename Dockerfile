# codeplane:dev — the codeplane service image (also used for analysis jobs).
# Kept in step with the Docker-free recipe in hack/cluster/images.sh (build_app):
# Debian bookworm + Node 24 + git/Python, user 10001, /app with package*.json,
# src, bin, crds, the workspace packages (packages/*, without their tests and
# fixtures: .dockerignore) and production node_modules; entrypoint `node /app/bin/codeplane.mjs`.
#   docker build -t codeplane:dev .
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# npm links the workspace packages (node_modules/@codeplane/*) from their manifests.
COPY packages/analyzer/package.json packages/analyzer/
COPY packages/frames/package.json packages/frames/
COPY packages/runner/package.json packages/runner/
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM node:24-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates git openssh-client python3 python3-pip python3-venv procps tini \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd -g 10001 runner && useradd -u 10001 -g 10001 -m -d /home/runner -s /bin/sh runner
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json ./
COPY bin ./bin
COPY crds ./crds
COPY src ./src
COPY packages ./packages
ENV NODE_ENV=production HOME=/home/runner LANG=C.UTF-8
USER 10001:10001
ENTRYPOINT ["node", "/app/bin/codeplane.mjs"]
CMD ["serve"]

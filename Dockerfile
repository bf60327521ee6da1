# codeplane:dev — the codeplane service image (also used for analysis jobs).
# One recipe with the Docker-free build (hack/cluster/images.sh build_app):
# the runner's system (images/runner/setup.sh over packages.txt), /app as
# images/codeplane/app-files.mjs selects it (manifests, bin, crds, src and
# packages/, no tests or test fakes) and production node_modules; the config
# below is images/codeplane/image.json's (test/images checks they agree).
#   docker build -t codeplane:dev .
FROM node:24-bookworm-slim AS files
COPY . /src
RUN node /src/images/codeplane/app-files.mjs /src /app \
 && node /src/images/codeplane/app-files.mjs --manifests /src /manifests

FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY --from=files /manifests/ ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM node:24-bookworm-slim
COPY images/runner/packages.txt images/runner/setup.sh /tmp/recipe/
RUN sh /tmp/recipe/setup.sh /tmp/recipe/packages.txt
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=files /app/ ./
LABEL org.opencontainers.image.title=codeplane
ENV NODE_ENV=production HOME=/home/runner LANG=C.UTF-8
USER 10001:10001
ENTRYPOINT ["node", "/app/bin/codeplane.mjs"]
CMD ["serve"]

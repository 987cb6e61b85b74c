# syntax=docker/dockerfile:1
# The renderer image: the renderer binary and Debian's Chromium, run as the
# non-root user 10001. Chromium's own sandbox needs user namespaces, which a
# restricted pod does not grant, so the manifests (deploy/k8s) run it with
# DISTILL_CHROMIUM_NO_SANDBOX=1 and the pod is the sandbox: no capabilities,
# the default seccomp profile, a read-only root and egress rules.
# Build from the repository root: docker build -f deploy/docker/renderer.Dockerfile -t distill/renderer .

FROM golang:1.26-bookworm AS build
# The version every binary reports, with the commit and build time that
# `distill version` prints (.git stays out of the context, so nothing else
# knows them): docker build --build-arg VERSION=0.2.0 --build-arg COMMIT=$(git rev-parse HEAD)
# --build-arg BUILD_DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ) ...
ARG VERSION=dev
ARG COMMIT=unknown
ARG BUILD_DATE=unknown
WORKDIR /src
# The whole workspace: go.work names every module, so each must be present.
COPY . .
# Cache mounts keep downloaded modules and compiled packages between builds;
# go build fetches only the modules this binary needs.
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    cd services/renderer && CGO_ENABLED=0 go build -trimpath -ldflags="-s -X distill.dev/services/platform/version.stamp=${VERSION} -X distill.dev/services/platform/version.commit=${COMMIT} -X distill.dev/services/platform/version.date=${BUILD_DATE}" -o /out/renderer ./cmd/renderer

FROM debian:bookworm-slim
# tini as PID 1 reaps the Chromium children that are orphaned when the renderer
# kills a hung browser; the renderer itself never waits on them.
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium fonts-liberation ca-certificates tini \
 && rm -rf /var/lib/apt/lists/*
RUN groupadd --system --gid 10001 renderer \
 && useradd --system --uid 10001 --gid renderer --no-create-home --home-dir /tmp --shell /usr/sbin/nologin renderer
COPY --from=build /out/renderer /usr/local/bin/renderer
# The binary listens on loopback unless told otherwise: here, the
# container's address. Chromium and go-rod's leakless helper write only
# under /tmp, which the pod mounts writable; the root filesystem stays
# read-only.
ENV DISTILL_LISTEN=0.0.0.0:7003 \
    DISTILL_CHROMIUM=/usr/bin/chromium \
    HOME=/tmp \
    XDG_CONFIG_HOME=/tmp/.config \
    XDG_CACHE_HOME=/tmp/.cache
USER 10001:10001
EXPOSE 7003 9464
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/renderer"]

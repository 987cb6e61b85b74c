# syntax=docker/dockerfile:1
# The gateway image: `distill serve --cluster` by default; the same binary runs
# `distill mcp --http ... --cluster` as an agent's sidecar (deploy/k8s/examples).
# Build from the repository root: docker build -f deploy/docker/gateway.Dockerfile -t distill/gateway .

FROM golang:1.26-bookworm AS build
# The version every binary reports, with the commit and build time that
# `distill version` prints (.git stays out of the context, so nothing else
# knows them): docker build --build-arg VERSION=0.2.0 --build-arg COMMIT=$(git rev-parse HEAD)
# --build-arg BUILD_DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ) ...
ARG VERSION=dev
ARG COMMIT=unknown
ARG BUILD_DATE=unknown
WORKDIR /src
# The whole workspace: go.work names every module, and the gateway imports them all.
COPY . .
# Cache mounts keep downloaded modules and compiled packages between builds;
# go build fetches only the modules this binary needs.
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    cd gateway && CGO_ENABLED=0 go build -trimpath -ldflags="-s -X distill.dev/services/platform/version.stamp=${VERSION} -X distill.dev/services/platform/version.commit=${COMMIT} -X distill.dev/services/platform/version.date=${BUILD_DATE}" -o /out/distill ./cmd/distill

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/distill /usr/local/bin/distill
# The binary listens on loopback unless told otherwise; in a container that
# is the container's address.
ENV DISTILL_LISTEN=0.0.0.0:7000
USER 65532:65532
EXPOSE 7000 9464
ENTRYPOINT ["/usr/local/bin/distill"]
CMD ["serve", "--cluster"]

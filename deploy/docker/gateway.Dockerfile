# syntax=docker/dockerfile:1
# The gateway image: `distill serve --cluster` by default; the same binary runs
# `distill mcp --http ... --cluster` as an agent's sidecar (deploy/k8s/examples).
# Build from the repository root: docker build -f deploy/docker/gateway.Dockerfile -t distill/gateway .

FROM golang:1.26-bookworm AS build
# The version every binary reports: docker build --build-arg VERSION=0.2.0 ...
ARG VERSION=dev
WORKDIR /src
# The whole workspace: go.work names every module, and the gateway imports them all.
COPY . .
# Cache mounts keep downloaded modules and compiled packages between builds;
# go build fetches only the modules this binary needs.
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    cd gateway && CGO_ENABLED=0 go build -trimpath -ldflags="-s -X distill.dev/services/platform/version.stamp=${VERSION}" -o /out/distill ./cmd/distill

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/distill /usr/local/bin/distill
# The binary listens on loopback unless told otherwise; in a container that
# is the container's address.
ENV DISTILL_LISTEN=0.0.0.0:7000
USER 65532:65532
EXPOSE 7000 9464
ENTRYPOINT ["/usr/local/bin/distill"]
CMD ["serve", "--cluster"]

# syntax=docker/dockerfile:1
# The extractor image: HTML in, Distilled out; it never opens a connection.
# Build from the repository root: docker build -f deploy/docker/extractor.Dockerfile -t distill/extractor .

FROM golang:1.26-bookworm AS build
# The version every binary reports: docker build --build-arg VERSION=0.2.0 ...
ARG VERSION=dev
WORKDIR /src
# The whole workspace: go.work names every module, so each must be present.
COPY . .
# Cache mounts keep downloaded modules and compiled packages between builds;
# go build fetches only the modules this binary needs.
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    cd services/extractor && CGO_ENABLED=0 go build -trimpath -ldflags="-s -X distill.dev/services/platform/version.stamp=${VERSION}" -o /out/extractor ./cmd/extractor

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/extractor /usr/local/bin/extractor
# The binary listens on loopback unless told otherwise; in a container that
# is the container's address.
ENV DISTILL_LISTEN=0.0.0.0:7002
USER 65532:65532
EXPOSE 7002 9464
ENTRYPOINT ["/usr/local/bin/extractor"]

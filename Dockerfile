# The ingest container image: one static binary on a distroless base, run
# as a non-root user. Build it with
#   docker build --build-arg VERSION=v1.2.3 -t ingest .
# and run it with the database and GitHub settings in the environment:
#   docker run --rm -e DATABASE_WRITE_URL -e GITHUB_TOKEN ingest run --run-id N
# The build step is scripts/build-static, which CI runs too (cmd/ingest's
# TestReleaseBuild), so the image's binary is tested without a Docker engine.
# The build stage runs on the builder's platform and cross-compiles for the
# image's (docker buildx build --platform linux/arm64 …), so a multi-platform
# image needs no emulation.
ARG GO_VERSION=1.26

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
ARG TARGETOS TARGETARCH
RUN GOOS=$TARGETOS GOARCH=$TARGETARCH ./scripts/build-static /out/ingest "$VERSION"

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ingest /usr/local/bin/ingest
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/ingest"]
CMD ["--help"]

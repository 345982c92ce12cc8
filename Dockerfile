# Causeway's image for builders that can pull base images:
#
#   docker build --build-arg VERSION=$(git describe --tags --always --dirty) \
#     --build-arg COMMIT=$(git rev-parse HEAD) -t causeway:dev .
#
# It installs the same packages (hack/image/packages) and runs the same
# customize step (hack/image/customize.sh) as `make image`, so the layout,
# user (101), entrypoint and writable directories are the same. `make image`
# is the tested path: it needs no registry, is reproducible (same inputs,
# same digest) and is what test/image runs. This file is not built by the
# tests; unlike `make image`, its base carries apt and its digest depends
# on the day's base images. See docs/install.md.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=unknown
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/causeway/causeway/internal/version.Version=${VERSION} -X github.com/causeway/causeway/internal/version.Commit=${COMMIT}" \
      -o /out/causeway ./cmd/causeway

FROM debian:bookworm-slim
COPY hack/image/packages hack/image/customize.sh /tmp/image/
RUN set -eux; \
    apt-get update; \
    grep -v '^[[:space:]]*\(#\|$\)' /tmp/image/packages \
      | xargs apt-get install -y --no-install-recommends; \
    apt-get install -y --no-install-recommends libcap2-bin; \
    /tmp/image/customize.sh /; \
    apt-get purge -y libcap2-bin; \
    apt-get clean; \
    rm -rf /tmp/image
COPY --from=build /out/causeway /usr/bin/causeway
USER 101:101
EXPOSE 80 443 8081 9113
VOLUME /var/lib/causeway
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/bin/causeway"]
CMD ["controller"]

# Builds the manager as a static binary and ships it alone on distroless,
# as a non-root user.
FROM golang:1.26 AS builder
ARG TARGETOS
ARG TARGETARCH
# The manager's version and commit (its myapp_operator_build_info metric);
# `make docker-build` passes them, since .git is not in the build context.
ARG VERSION=devel
ARG COMMIT=unknown

WORKDIR /workspace
# Dependencies first, so a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download

COPY api/ api/
COPY cmd/manager/ cmd/manager/
COPY internal/ internal/

RUN CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags="-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" -o manager ./cmd/manager

FROM gcr.io/distroless/static:nonroot
WORKDIR /
COPY --from=builder /workspace/manager .
USER 65532:65532

ENTRYPOINT ["/manager"]

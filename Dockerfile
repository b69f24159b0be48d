# Contrail in a container: one static binary.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# What `contrail --version` prints: docker build --build-arg VERSION=$(git describe --tags --always --dirty) .
ARG VERSION=devel
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-X main.version=${VERSION}" -o /out/contrail ./cmd/contrail

FROM debian:12-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/contrail /usr/local/bin/contrail
ENV CONTRAIL_DATA_DIR=/data CONTRAIL_ADDR=0.0.0.0:8080 CONTRAIL_LOG_FORMAT=json
VOLUME /data
EXPOSE 8080
ENTRYPOINT ["contrail"]
CMD ["serve"]

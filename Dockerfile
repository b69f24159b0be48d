# Contrail in a container: what `make run` runs. One static binary; the use-lite weights, the default embedder; and
# the code_interpreter sandbox (bubblewrap, and Debian's python3 with numpy, pandas and matplotlib, mk/sandbox.mk).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# What `contrail --version` prints: docker build --build-arg VERSION=$(git describe --tags --always --dirty) .
ARG VERSION=devel
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-X main.version=${VERSION}" -o /out/contrail ./cmd/contrail

# The use-lite weights, fetched with npm and checked against the integrity the script pins (as `make models` does).
# MODELS_STRICT: an image without them would quietly run on the n-gram embedder.
FROM node:22-bookworm-slim AS models
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates openssl \
	&& rm -rf /var/lib/apt/lists/*
COPY scripts/fetch-use-lite.sh /fetch-use-lite.sh
RUN MODELS_STRICT=1 sh /fetch-use-lite.sh /models && rm -rf /models/cache

FROM debian:12-slim
# The sandbox mounts /usr only: the python3 and modules code runs with are these, Debian's.
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates \
	bubblewrap python3 python3-numpy python3-pandas python3-matplotlib \
	&& rm -rf /var/lib/apt/lists/*
COPY --from=build /out/contrail /usr/local/bin/contrail
COPY --from=models /models/use-lite /usr/share/contrail/models/use-lite
# bubblewrap makes user namespaces: under Docker's default seccomp profile it cannot, and code_interpreter is then
# unavailable (/readyz says why). docker-compose.yml runs the nodes with the profile that allows it.
ENV CONTRAIL_DATA_DIR=/data CONTRAIL_ADDR=0.0.0.0:8080 CONTRAIL_LOG_FORMAT=json \
	CONTRAIL_MODELS_DIR=/usr/share/contrail/models
VOLUME /data
EXPOSE 8080
ENTRYPOINT ["contrail"]
CMD ["serve"]

# gpuplan's HTTP API in a small runtime image.
#   docker build -t gpuplan .
#   docker run --rm -p 8080:8080 gpuplan
# The catalog is built into the binary; nothing is downloaded when the container starts.

FROM rust:1-slim-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p gpuplan-cli

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 gpuplan
COPY --from=build /src/target/release/gpuplan /usr/local/bin/gpuplan
USER 10001
EXPOSE 8080
# SIGTERM finishes the requests in flight, then exits 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["gpuplan"]
CMD ["serve", "--addr", "0.0.0.0:8080"]

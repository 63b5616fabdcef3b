# syntax=docker/dockerfile:1
# opendata-mcp over HTTP in a container: Streamable HTTP at /mcp, legacy SSE at /sse + /message,
# liveness at /health, on 0.0.0.0:8000. Quick start: docker compose up (docker-compose.yml);
# settings and what a deployment must set: docs/DEPLOYMENT.md.
#
#   docker build -t opendata-mcp .
#   docker run --rm -p 8000:8000 -e MCP_ALLOWED_HOSTS=localhost,127.0.0.1 opendata-mcp

# Official Deno images (github.com/denoland/deno_docker), pinned to the Deno of .ci/run and CI.
ARG DENO_VERSION=2.9.6
# Digest pins: each "@sha256:..." fixes the exact image a tag pointed at when pinned, so a re-pushed
# tag cannot change what is built. NOT PINNED YET: this repository was prepared without access to a
# registry, and a digest is never guessed. To pin, read the digests once and fill them in (or pass
# them with --build-arg), e.g.
#   docker buildx imagetools inspect denoland/deno:2.9.6 --format '{{json .Manifest.Digest}}'
#   docker buildx imagetools inspect denoland/deno:distroless-2.9.6 --format '{{json .Manifest.Digest}}'
# then DENO_BUILD_DIGEST=@sha256:<hex> and DENO_RUNTIME_DIGEST=@sha256:<hex>.
ARG DENO_BUILD_DIGEST=
ARG DENO_RUNTIME_DIGEST=

# 1. Build: npm dependencies from the frozen lock into /app/node_modules, then the start bundle
#    built from the sources (`deno task build`'s tools/bundle.ts; bundle/ is never committed) and
#    laid out in /runtime as the runtime stage's /app.
FROM denoland/deno:${DENO_VERSION}${DENO_BUILD_DIGEST} AS build
WORKDIR /app
# Dependencies first, so this layer is rebuilt only when deno.json or deno.lock change.
COPY deno.json deno.lock ./
RUN deno install --frozen
COPY main.ts ./
COPY lib/ lib/
COPY tools/ tools/
COPY config/ config/
# /runtime: bundle/ (main.ts, lib/, the MCP SDK and zod, built now from the sources above),
# deno.json (the permission set, the import map), deno.lock, config/, and a node_modules/ holding
# only the packages the bundle loads from it (OpenTelemetry's API, the Redis client, jose, js-yaml,
# gpt-tokenizer, with their dependencies): the test-only ones (client SDKs, playwright-core,
# oidc-provider, ...) stay in this stage. Then a Deno cache of its own for the server (module
# analysis only: with a manual node_modules/, npm packages are read from /app/node_modules). Write
# access is unscoped because Deno lets a program make symbolic links (node_modules/'s) only so.
RUN deno run --allow-read --allow-write --allow-run --allow-env tools/bundle.ts --runtime /runtime \
  && cd /runtime \
  && DENO_DIR=/runtime-deno-dir deno cache --node-modules-dir=manual bundle/main.js \
  && mkdir -p /data

# 2. Runtime: distroless (no shell, no package manager), as the unprivileged user 65532.
FROM denoland/deno:distroless-${DENO_VERSION}${DENO_RUNTIME_DIGEST}
# The server's version (lib/version.ts; tools/release.ts check-version keeps the two equal).
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="opendata-mcp" \
      org.opencontainers.image.description="MCP server for public open data: World Bank, Bank of Japan, FRED, Wikipedia, Store norske leksikon, Riksantikvaren, GeoNorge" \
      org.opencontainers.image.source="https://github.com/opendata-mcp/opendata-mcp" \
      org.opencontainers.image.version="${VERSION}" \
      io.modelcontextprotocol.server.name="io.github.opendata-mcp/opendata-mcp"
WORKDIR /app
# The code stays root-owned (read-only to the server); its Deno cache and the data folder are its own.
# Only /runtime comes over: no sources, tools or test-only packages, no build cache.
COPY --from=build /runtime /app
COPY --from=build --chown=65532:65532 /runtime-deno-dir /deno-dir
COPY --from=build --chown=65532:65532 /data /data
USER 65532:65532
# Files the server writes (FRED exports) go to /data, a volume in docker-compose.yml.
ENV OPENDATA_MCP_DATA_DIR=/data
# As the start task sets it: one glibc malloc arena, so V8's compiler threads do not each keep
# freed memory resident (docs/BENCHMARKS.md, "Start-up as users start it").
ENV MALLOC_ARENA_MAX=1
VOLUME ["/data"]
EXPOSE 8000
# /health answers 200 while the server serves; it needs no token but is subject to the Host
# check, so MCP_ALLOWED_HOSTS must include 127.0.0.1 when it is set (docs/DEPLOYMENT.md).
# deno eval has every permission; the image has no shell and no curl.
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
  CMD ["/bin/deno", "eval", "const r = await fetch('http://127.0.0.1:8000/health'); Deno.exit(r.ok ? 0 : 1);"]
# The start:http task's command (deno.json: deno run -q --unstable-lazy-dynamic-imports
# --unstable-no-legacy-abort -P --no-prompt --node-modules-dir=manual with the V8 flags of a shared HTTP
# server and the one permission set) on the
# built bundle/main.js instead of main.ts, plus --cached-only; flags fix the transport and address, so a
# blank variable in an env file cannot move them. tini (the image's entrypoint) forwards SIGTERM: the
# server finishes calls in flight for MCP_SHUTDOWN_GRACE (10 s), so give it ~15 s before SIGKILL
# (stop_grace_period).
CMD ["run", "-q", "--unstable-lazy-dynamic-imports", "--unstable-no-legacy-abort", "-P", "--no-prompt", "--node-modules-dir=manual", "--v8-flags=--max-old-space-size=1024", "--cached-only", "bundle/main.js", "serve", "--transport", "http", "--host", "0.0.0.0", "--port", "8000"]

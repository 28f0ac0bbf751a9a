#!/usr/bin/env bash
# Builds every image of the Docker lab on a machine that reaches no image registry, only a
# Debian mirror: a debootstrap'd bookworm root imported with `docker import`, then one
# `docker build --network host` per image (Debian's redis-server, postgresql and prometheus;
# this machine's Node.js binary for the api and llm-stub; our faultproxy standing in for
# Toxiproxy). Grafana has no Debian package, so the offline lab runs without it.
#
# Writes docker/offline.env, which points the compose file's image variables at these images:
#   docker compose --env-file docker/offline.env up -d api redis postgres toxiproxy prometheus
#   metabench lab up --runtime docker --env-file docker/offline.env
#
# An image that exists is kept (REBUILD=1 rebuilds all); the api image (and the stand-in for
# Toxiproxy built on it) is rebuilt when dist/ changed since it was built: it carries a hash of
# dist/ as a label. Needs root (debootstrap), docker, debootstrap, and `npm run build` done.
set -euo pipefail
cd "$(dirname "$0")/.."

PREFIX=${METABENCH_OFFLINE_PREFIX:-metabench-offline}
SUITE=bookworm
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
REBUILD=${REBUILD:-0}
NICE=(nice -n 19 ionice -c3)
BASE=$PREFIX/debian:$SUITE
NODE_IMAGE=$PREFIX/node:$(node --version | tr -d v)
API_IMAGE=$PREFIX/api:dev
OFF=docker/offline

say() { printf '== %s\n' "$*" >&2; }
have() { [ "$REBUILD" != 1 ] && docker image inspect "$1" >/dev/null 2>&1; }
# build TAG DOCKERFILE [--build-arg ...] -- tar members of the context (DIR:PATH...)
build() {
  local tag=$1 file=$2
  shift 2
  local args=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
  shift
  # Absolute directories: tar reads each -C relative to the previous one.
  local members=(-C "$PWD/$OFF" "$file")
  for m in "$@"; do members+=(-C "$(cd "${m%%:*}" && pwd)" "${m#*:}"); done
  say "build $tag"
  # The repository's files go under app/ (one COPY in api.Dockerfile); heavy dev-only packages stay out.
  tar -cf - --exclude='node_modules/typescript' --exclude='node_modules/prettier' \
    --exclude='node_modules/playwright-core' --exclude='node_modules/eslint' \
    --exclude='node_modules/@typescript-eslint' --exclude='node_modules/autocannon' \
    --exclude='*.test.js' --exclude='*.map' --transform='s,^\(package\.json\|node_modules\|dist\),app/\1,' \
    "${members[@]}" |
    "${NICE[@]}" docker build --network host -q -t "$tag" -f "$file" "${args[@]}" - >/dev/null
}

command -v docker >/dev/null || { echo "docker is not installed" >&2; exit 4; }
docker info >/dev/null 2>&1 || { echo "the Docker engine does not answer (is dockerd running?)" >&2; exit 4; }
[ -f dist/services/api/main.js ] || { echo "dist/ is missing: run npm run build first" >&2; exit 4; }

t0=$(date +%s)
if ! have "$BASE"; then
  command -v debootstrap >/dev/null || { echo "debootstrap is not installed (apt-get install debootstrap)" >&2; exit 4; }
  root=$(mktemp -d /var/tmp/metabench-rootfs.XXXXXX)
  trap 'rm -rf "$root"' EXIT
  say "debootstrap --variant=minbase $SUITE (a few minutes)"
  "${NICE[@]}" debootstrap --variant=minbase "$SUITE" "$root" "$MIRROR" >/dev/null
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  say "docker import $BASE"
  chmod 755 "$root" # mktemp's 0700 would become the image's / and lock non-root users out
  tar -C "$root" -c . |
    docker import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'CMD ["bash"]' - "$BASE" >/dev/null
  rm -rf "$root"
fi

nodebin=$(command -v node)
have "$NODE_IMAGE" || build "$NODE_IMAGE" node.Dockerfile --build-arg "BASE=$BASE" -- "$(dirname "$nodebin"):$(basename "$nodebin")"
dist_hash=$(find dist package.json -type f ! -name '*.map' ! -name '*.test.js' -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)
built_hash=$(docker image inspect -f '{{ index .Config.Labels "metabench.dist" }}' "$API_IMAGE" 2>/dev/null || true)
if [ "$REBUILD" = 1 ] || [ "$built_hash" != "$dist_hash" ]; then
  build "$API_IMAGE" api.Dockerfile --build-arg "NODE_IMAGE=$NODE_IMAGE" --label "metabench.dist=$dist_hash" -- \
    ".:package.json" ".:node_modules" ".:dist"
  # The stand-in for Toxiproxy is built on the api image, so it follows it.
  docker image rm -f "$PREFIX/toxiproxy:faultproxy" >/dev/null 2>&1 || true
fi
have "$PREFIX/toxiproxy:faultproxy" ||
  build "$PREFIX/toxiproxy:faultproxy" faultproxy.Dockerfile --build-arg "API_IMAGE=$API_IMAGE" -- "$OFF:toxiproxy" "$OFF:toxiproxy-cli"
have "$PREFIX/redis:$SUITE" || build "$PREFIX/redis:$SUITE" redis.Dockerfile --build-arg "BASE=$BASE" --
have "$PREFIX/postgres:$SUITE" ||
  build "$PREFIX/postgres:$SUITE" postgres.Dockerfile --build-arg "BASE=$BASE" -- "$OFF:postgres-entrypoint.sh"
have "$PREFIX/prometheus:$SUITE" || build "$PREFIX/prometheus:$SUITE" prometheus.Dockerfile --build-arg "BASE=$BASE" --

cat > "$OFF.env" <<ENV
# Written by scripts/build-offline-images.sh: the compose file's images, built locally.
METABENCH_API_IMAGE=$API_IMAGE
METABENCH_REDIS_IMAGE=$PREFIX/redis:$SUITE
METABENCH_POSTGRES_IMAGE=$PREFIX/postgres:$SUITE
METABENCH_TOXIPROXY_IMAGE=$PREFIX/toxiproxy:faultproxy
METABENCH_PROMETHEUS_IMAGE=$PREFIX/prometheus:$SUITE
ENV
say "images ready in $(( $(date +%s) - t0 )) s; compose overrides in $OFF.env"

#!/usr/bin/env bash
# Builds every image of the Docker lab on a machine that reaches no image registry, only a
# Debian mirror: a debootstrap'd bookworm root imported with `docker import`, then one
# `docker build` per image (Debian's redis-server, postgresql and prometheus; this machine's
# Node.js binary as the stand-in for the official Node.js image; our faultproxy standing in for
# Toxiproxy; the three reference labs' servers from Debian's packages). Grafana has no Debian
# package, so the offline lab runs without it.
#
# The api image is built from docker/api/Dockerfile, the file users build, with its base images
# pointed at the local ones (build arguments): BASE_IMAGE the Node.js stand-in, BUILD_IMAGE the
# same with this checkout's node_modules in /app (so its `npm ci` is skipped and no registry is
# reached: the build runs with --network none). Docker's layer cache rebuilds it when a source
# file changed.
#
# Writes docker/offline.env, which points the compose file's image variables at these images:
#   docker compose --env-file docker/offline.env up -d api redis postgres toxiproxy prometheus
#   metabench lab up --runtime docker --env-file docker/offline.env
#
# Every image is built each time, Docker's layer cache making an unchanged one take seconds;
# REBUILD=1 builds without the cache, and also redoes the Debian root. Needs root (debootstrap), docker,
# debootstrap, and node_modules installed (npm ci).
set -euo pipefail
cd "$(dirname "$0")/.."

PREFIX=${METABENCH_OFFLINE_PREFIX:-metabench-offline}
SUITE=bookworm
# The Debian mirror: DEBIAN_MIRROR, else the one this machine's apt uses for bookworm's main
# archive (so the build reaches what apt reaches), else debootstrap's own default.
apt_mirror() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    if [ -r "$f" ]; then cat "$f"; fi
  done |
    awk '/^deb / && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; exit } }
         /^URIs:/ && $2 !~ /security/ { print $2; exit }'
}
MIRROR=${DEBIAN_MIRROR:-$(apt_mirror || true)}
REBUILD=${REBUILD:-0}
NICE=(nice -n 19 ionice -c3)
BASE=$PREFIX/debian:$SUITE
NODE_IMAGE=$PREFIX/node:$(node --version | tr -d v)
API_IMAGE=$PREFIX/api:dev
OFF=docker/offline

say() { printf '== %s\n' "$*" >&2; }
have() { [ "$REBUILD" != 1 ] && docker image inspect "$1" >/dev/null 2>&1; }
CACHE=()
[ "$REBUILD" = 1 ] && CACHE=(--no-cache)
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
  # --force-rm: a step that fails leaves no container behind (the legacy builder keeps it otherwise).
  tar -cf - "${members[@]}" | "${NICE[@]}" docker build --network host --force-rm "${CACHE[@]}" -q -t "$tag" -f "$file" "${args[@]}" - >/dev/null
}

command -v docker >/dev/null || { echo "docker is not installed" >&2; exit 4; }
docker info >/dev/null 2>&1 || { echo "the Docker engine does not answer (is dockerd running?)" >&2; exit 4; }
[ -d node_modules/typescript ] || { echo "node_modules is missing: run npm ci first" >&2; exit 4; }

t0=$(date +%s)
if ! have "$BASE"; then
  command -v debootstrap >/dev/null || { echo "debootstrap is not installed (apt-get install debootstrap)" >&2; exit 4; }
  root=$(mktemp -d /var/tmp/metabench-rootfs.XXXXXX)
  trap 'rm -rf "$root"' EXIT
  say "debootstrap --variant=minbase $SUITE (a few minutes)"
  "${NICE[@]}" debootstrap --variant=minbase "$SUITE" "$root" ${MIRROR:+"$MIRROR"} >/dev/null
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  say "docker import $BASE"
  chmod 755 "$root" # mktemp's 0700 would become the image's / and lock non-root users out
  tar -C "$root" -c . |
    docker import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'CMD ["bash"]' - "$BASE" >/dev/null
  rm -rf "$root"
fi

nodebin=$(command -v node)
npmdir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")") # …/node_modules/npm
build "$NODE_IMAGE" node.Dockerfile --build-arg "BASE=$BASE" -- "$(dirname "$nodebin"):$(basename "$nodebin")" \
  "$(dirname "$npmdir"):npm"
# The api's build stage: the Node.js stand-in with node_modules (as `npm ci` installs it from
# package-lock.json), one image per lockfile and Node.js image.
node_id=$(docker image inspect -f '{{.Id}}' "$NODE_IMAGE" | cut -d: -f2 | cut -c1-12)
DEPS_IMAGE=$PREFIX/node-deps:$node_id-$(sha256sum package-lock.json | cut -c1-12)
modules=$(realpath node_modules)
have "$DEPS_IMAGE" ||
  build "$DEPS_IMAGE" deps.Dockerfile --build-arg "NODE_IMAGE=$NODE_IMAGE" -- "$(dirname "$modules"):node_modules"
say "build $API_IMAGE from docker/api/Dockerfile"
t1=$(date +%s)
"${NICE[@]}" docker build --network none --force-rm "${CACHE[@]}" -q -t "$API_IMAGE" -f docker/api/Dockerfile \
  --build-arg "BASE_IMAGE=$NODE_IMAGE" --build-arg "BUILD_IMAGE=$DEPS_IMAGE" . >/dev/null
say "api image built in $(( $(date +%s) - t1 )) s"
# The stand-in for Toxiproxy is built on the api image (the layer cache keeps it while the api is unchanged).
build "$PREFIX/toxiproxy:faultproxy" faultproxy.Dockerfile --build-arg "API_IMAGE=$API_IMAGE" -- "$OFF:toxiproxy" "$OFF:toxiproxy-cli"
build "$PREFIX/redis:$SUITE" redis.Dockerfile --build-arg "BASE=$BASE" --
build "$PREFIX/postgres:$SUITE" postgres.Dockerfile --build-arg "BASE=$BASE" -- "$OFF:postgres-entrypoint.sh"
build "$PREFIX/prometheus:$SUITE" prometheus.Dockerfile --build-arg "BASE=$BASE" --
# The reference labs (issue 34): Debian's nginx + php-fpm, nginx + gunicorn and OpenJDK (a jlink'd
# runtime) on the same root, each started by reference-entrypoint.sh from the same files in
# services/reference/ as on the local runtime.
t2=$(date +%s)
build "$PREFIX/ref-php-fpm:$SUITE" ref-php-fpm.Dockerfile --build-arg "BASE=$BASE" -- "$OFF:reference-entrypoint.sh" \
  "$OFF:reference-fpm-metrics.php" services/reference:php-fpm services/reference:nginx
build "$PREFIX/ref-gunicorn:$SUITE" ref-gunicorn.Dockerfile --build-arg "BASE=$BASE" -- "$OFF:reference-entrypoint.sh" \
  services/reference:gunicorn services/reference:nginx
build "$PREFIX/ref-jvm:$SUITE" ref-jvm.Dockerfile --build-arg "BASE=$BASE" -- "$OFF:reference-entrypoint.sh" \
  services/reference:jvm/RefServer.java
say "reference images built in $(( $(date +%s) - t2 )) s"

cat > "$OFF.env" <<ENV
# Written by scripts/build-offline-images.sh: the compose file's images, built locally.
METABENCH_API_IMAGE=$API_IMAGE
METABENCH_REDIS_IMAGE=$PREFIX/redis:$SUITE
METABENCH_POSTGRES_IMAGE=$PREFIX/postgres:$SUITE
METABENCH_TOXIPROXY_IMAGE=$PREFIX/toxiproxy:faultproxy
METABENCH_PROMETHEUS_IMAGE=$PREFIX/prometheus:$SUITE
# The reference labs' servers (docs/docker-lab.md): not services of the compose file.
METABENCH_REF_PHP_FPM_IMAGE=$PREFIX/ref-php-fpm:$SUITE
METABENCH_REF_GUNICORN_IMAGE=$PREFIX/ref-gunicorn:$SUITE
METABENCH_REF_JVM_IMAGE=$PREFIX/ref-jvm:$SUITE
ENV
say "images ready in $(( $(date +%s) - t0 )) s; compose overrides in $OFF.env"

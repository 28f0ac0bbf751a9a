#!/bin/bash
# The entry point of the reference labs' Docker images (scripts/build-offline-images.sh:
# metabench-offline/ref-php-fpm, ref-gunicorn, ref-jvm): starts the same server, from the same
# files in services/reference/, as the local runtime does (orchestrator/lab/local/reference*.ts),
# with its work declared in the environment, listening on 0.0.0.0 inside the container (whoever
# runs it publishes the ports, to 127.0.0.1); php-fpm and gunicorn behind nginx, as there, on
# loopback ports of their own (9000 and 8000):
#
#   METABENCH_WORKERS        c: php-fpm's static children, gunicorn's sync workers, the JVM
#                            pool's threads (required; 1 to 1024)
#   METABENCH_WORK_MS        S: each request's sleep, ms (required; 0 or more)
#   METABENCH_CPU_MS         CPU burnt before the sleep, ms (default 0)
#   METABENCH_PORT           where the load goes (default 8080; /health does no work)
#   METABENCH_METRICS_PORT   the bench's series in Prometheus text at /metrics (default 9100)
#   METABENCH_JVM_HEAP_MB    jvm only: -Xms = -Xmx, MiB (required; 16 or more)
#   METABENCH_JVM_COLLECTOR  jvm only: serial (default), parallel or g1
#   METABENCH_JVM_ALLOC_BYTES jvm only: bytes each request holds from receipt to answer (default 0)
#   METABENCH_JVM_QUEUE      jvm only: requests that may wait for a thread, beyond it 503
#                            (default: unbounded)
#
# The predicted capacity is c / (S + CPU) per second. A value that could never give a server of
# predictable capacity is refused, naming the variable, with exit code 2 (as the local runtime's
# checkReferenceOptions refuses it); so is an unknown METABENCH_ variable (a misspelt one would
# otherwise be ignored). `reference-entrypoint.sh KIND --dry-run` checks the environment, writes
# the configuration and prints the commands it would run, one per line, without running them.
set -euo pipefail
shopt -u patsub_replacement 2>/dev/null || true # '&' in a value is a '&', not the matched text

kind=${1:-}
dry=${2:-}
die() {
  echo "reference-entrypoint ($kind): $*" >&2
  exit 2
}
case $kind in
php-fpm | gunicorn | jvm) ;;
*) die "usage: reference-entrypoint.sh php-fpm|gunicorn|jvm [--dry-run] (got '$kind')" ;;
esac
[ -z "$dry" ] || [ "$dry" = --dry-run ] || die "unknown argument '$dry' (only --dry-run)"

# Where the server's files are (the image's copy of services/reference/) and where its
# configuration, sockets and metrics files go. Both movable for the dry run's test.
REF=${METABENCH_REFERENCE_DIR:-/opt/metabench/reference}
RUN=${METABENCH_RUN_DIR:-/run/metabench}

KNOWN='METABENCH_WORKERS METABENCH_WORK_MS METABENCH_CPU_MS METABENCH_PORT METABENCH_METRICS_PORT
METABENCH_JVM_HEAP_MB METABENCH_JVM_COLLECTOR METABENCH_JVM_ALLOC_BYTES METABENCH_JVM_QUEUE
METABENCH_REFERENCE_DIR METABENCH_RUN_DIR'
for name in $(compgen -e | grep '^METABENCH_' || true); do
  case " $(echo $KNOWN) " in
  *" $name "*) ;;
  *) die "$name is not a setting of the reference images (known: $(echo $KNOWN))" ;;
  esac
done

# A whole number of at most 9 digits (no sign, no exponent; bash's arithmetic then holds it).
whole() { [[ $1 =~ ^[0-9]{1,9}$ ]]; }
# A decimal of 0 or more: digits, optionally a fraction.
decimal() { [[ $1 =~ ^[0-9]{1,9}(\.[0-9]+)?$ ]]; }

workers=${METABENCH_WORKERS-}
[ -n "$workers" ] || die "METABENCH_WORKERS is required: the pool's size c (1 to 1024)"
whole "$workers" && ((10#$workers >= 1 && 10#$workers <= 1024)) ||
  die "METABENCH_WORKERS must be a whole number from 1 to 1024 (got '$workers')"
workers=$((10#$workers))
work_ms=${METABENCH_WORK_MS-}
[ -n "$work_ms" ] || die "METABENCH_WORK_MS is required: each request's declared sleep S, ms"
decimal "$work_ms" || die "METABENCH_WORK_MS must be a number of 0 or more (got '$work_ms')"
cpu_ms=${METABENCH_CPU_MS:-0}
decimal "$cpu_ms" || die "METABENCH_CPU_MS must be a number of 0 or more (got '$cpu_ms')"
[[ $work_ms$cpu_ms =~ [1-9] ]] ||
  die "METABENCH_WORK_MS and METABENCH_CPU_MS are both 0: the work must be declared for capacity to be predicted"
port_of() {
  local name=$1 v=$2
  whole "$v" && ((10#$v >= 1 && 10#$v <= 65535)) || die "$name must be a port number from 1 to 65535 (got '$v')"
  echo $((10#$v))
}
port=$(port_of METABENCH_PORT "${METABENCH_PORT:-8080}")
metrics_port=$(port_of METABENCH_METRICS_PORT "${METABENCH_METRICS_PORT:-9100}")
[ "$port" != "$metrics_port" ] || die "METABENCH_METRICS_PORT must differ from METABENCH_PORT (both $port)"

if [ "$kind" = jvm ]; then
  heap_mb=${METABENCH_JVM_HEAP_MB-}
  [ -n "$heap_mb" ] || die "METABENCH_JVM_HEAP_MB is required: the heap bound (-Xmx), MiB"
  whole "$heap_mb" && ((10#$heap_mb >= 16)) ||
    die "METABENCH_JVM_HEAP_MB must be a whole number of at least 16 (got '$heap_mb')"
  heap_mb=$((10#$heap_mb))
  collector=${METABENCH_JVM_COLLECTOR:-serial}
  case $collector in
  serial) gc_flag=-XX:+UseSerialGC ;;
  parallel) gc_flag=-XX:+UseParallelGC ;;
  g1) gc_flag=-XX:+UseG1GC ;;
  *) die "METABENCH_JVM_COLLECTOR must be one of serial, parallel, g1 (got '$collector')" ;;
  esac
  alloc=${METABENCH_JVM_ALLOC_BYTES:-0}
  whole "$alloc" || die "METABENCH_JVM_ALLOC_BYTES must be a whole number of bytes (got '$alloc')"
  alloc=$((10#$alloc))
  ((alloc * workers <= heap_mb * 1024 * 1024)) ||
    die "METABENCH_JVM_ALLOC_BYTES × METABENCH_WORKERS ($((alloc * workers)) bytes) exceeds the heap ($heap_mb MiB): the pool could never run full"
  queue=${METABENCH_JVM_QUEUE:-}
  if [ -n "$queue" ]; then
    whole "$queue" && ((10#$queue >= 1)) ||
      die "METABENCH_JVM_QUEUE must be a whole number of at least 1, or unset for unbounded (got '$queue')"
    queue=$((10#$queue))
  else
    queue=0 # RefServer's unbounded
  fi
else
  for name in METABENCH_JVM_HEAP_MB METABENCH_JVM_COLLECTOR METABENCH_JVM_ALLOC_BYTES METABENCH_JVM_QUEUE; do
    [ -z "${!name:-}" ] || die "$name applies only to the jvm server"
  done
fi

mkdir -p "$RUN"
chmod 755 "$RUN" # php-fpm's pool and nginx's worker drop root and read their files here

# fill FROM TO NAME=VALUE...: a template of services/reference/ with its {{NAME}} fields
# filled in, as the local runtime's fillTemplate does; a field left unfilled is refused.
fill() {
  local from=$1 to=$2 text kv
  shift 2
  text=$(<"$from")
  for kv in "$@"; do text=${text//"{{${kv%%=*}}}"/"${kv#*=}"}; done
  if [[ $text =~ \{\{([A-Za-z_]+)\}\} ]]; then
    echo "reference-entrypoint ($kind): $from: template field ${BASH_REMATCH[1]} has no value" >&2
    exit 3
  fi
  printf '%s\n' "$text" >"$to"
}

# Each command, printed on one line (the dry run's output) or started.
show() { printf '%q ' "$@" | sed 's/ $//'; echo; }

# The pool's own port inside the container, on loopback behind nginx (php-fpm's FastCGI,
# gunicorn's HTTP); the load's and the metrics' ports must differ from it.
case $kind in
php-fpm) pool_port=9000 ;;
gunicorn) pool_port=8000 ;;
*) pool_port= ;;
esac
if [ -n "$pool_port" ]; then
  [ "$port" != "$pool_port" ] || die "METABENCH_PORT must not be $pool_port: $kind's own port inside the container"
  [ "$metrics_port" != "$pool_port" ] ||
    die "METABENCH_METRICS_PORT must not be $pool_port: $kind's own port inside the container"
fi
# nginx's configuration as the local runtime writes it (referenceNginx.ts): the frame every
# nginx of the labs shares, with the server's own locations (SERVER/nginx-locations.conf),
# filled in first. The pool stays on loopback; nginx listens on 0.0.0.0.
nginx_conf() {
  fill "$REF/$kind/nginx-locations.conf" "$RUN/nginx-locations.conf" "$@"
  fill "$REF/nginx/front.conf" "$RUN/nginx.conf" "locations=$(<"$RUN/nginx-locations.conf")" "$@"
  nginx=(nginx -e stderr -p "$RUN" -c "$RUN/nginx.conf")
}

# Runs the arrays pool, nginx and metrics (the last may be empty) as the local runtime starts
# them: the pool first, nginx only once the pool listens on 127.0.0.1:pool_port (a request
# before that would be a 502 that nginx counted as received and the pool never completed;
# seen in the kernel's table of listening sockets, not by connecting: php-fpm would count a
# connection in its accepted ones). The first process to exit ends the container (with its
# code): what is left of the server would answer wrongly. A TERM (docker stop) stops all.
serve_behind_nginx() {
  pids=()
  stopping=0
  stop_all() {
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  }
  trap 'stopping=1; stop_all' TERM INT
  "${pool[@]}" &
  pids+=($!)
  local listen_hex
  listen_hex=$(printf '0100007F:%04X' "$pool_port")
  for _ in $(seq 1 300); do
    awk -v a="$listen_hex" '$2 == a && $4 == "0A" { found = 1 } END { exit !found }' /proc/net/tcp && break
    kill -0 "${pids[0]}" 2>/dev/null || break
    sleep 0.1
  done
  "${nginx[@]}" &
  pids+=($!)
  if [ ${#metrics[@]} -gt 0 ]; then
    "${metrics[@]}" >/dev/null 2>&1 &
    pids+=($!)
  fi
  local what="$kind or nginx"
  [ ${#metrics[@]} -eq 0 ] || what="$kind, nginx or the metrics server"
  code=0
  wait -n "${pids[@]}" || code=$?
  [ "$stopping" = 1 ] || echo "reference-entrypoint ($kind): $what exited (code $code): stopping the others" >&2
  stop_all
  wait || true
  [ "$stopping" = 0 ] || code=0 # asked to stop: not a failure
  exit "$code"
}

metrics=()
case $kind in
php-fpm)
  cp "$REF/php-fpm/work.php" "$RUN/work.php"
  # As root (the container's user), the pool runs as www-data: php-fpm refuses a root pool.
  fields=("dir=$RUN" host=127.0.0.1 listenHost=0.0.0.0 "port=$port" "fpmPort=$pool_port"
    "workers=$workers" "workMs=$work_ms" "cpuMs=$cpu_ms" "scripts=$RUN" "user=user = www-data
group = www-data")
  fill "$REF/php-fpm/php-fpm.conf" "$RUN/php-fpm.conf" "${fields[@]}"
  nginx_conf "${fields[@]}"
  pool=(php-fpm8.2 -n -F -O -y "$RUN/php-fpm.conf")
  # /metrics: FPM's and nginx's status pages as the bench's series (fpm-metrics.php), served by
  # PHP's own single-process server on a port of its own, so a scrape answers while the pool is busy.
  metrics=(env "METABENCH_STATUS_URL=http://127.0.0.1:$port" "METABENCH_OWN_FILE=$RUN/own-requests"
    php -n -S "0.0.0.0:$metrics_port" "$REF/php-fpm/fpm-metrics.php")
  [ -n "$dry" ] || echo 0 >"$RUN/own-requests"
  ;;
gunicorn)
  # gunicorn on a loopback port of its own behind nginx, as on the local runtime
  # (referenceGunicorn.ts); its master serves /metrics on 0.0.0.0, received read from nginx's
  # stub_status (gunicorn_conf.py), the accept queue from gunicorn's own socket.
  nginx_conf "dir=$RUN" host=127.0.0.1 listenHost=0.0.0.0 "port=$port" "upstreamPort=$pool_port"
  mkdir -p "$RUN/prometheus"
  rm -f "$RUN"/prometheus/*.db
  pool=(env PROMETHEUS_MULTIPROC_DIR="$RUN/prometheus" METABENCH_HOST=127.0.0.1 "METABENCH_PORT=$pool_port"
    METABENCH_METRICS_HOST=0.0.0.0 "METABENCH_METRICS_PORT=$metrics_port"
    "METABENCH_NGINX_STATUS_URL=http://127.0.0.1:$port/nginx-status"
    "METABENCH_WORK_MS=$work_ms" "METABENCH_CPU_MS=$cpu_ms" PYTHONDONTWRITEBYTECODE=1
    gunicorn --config "$REF/gunicorn/gunicorn_conf.py" --chdir "$REF/gunicorn" --workers "$workers"
    --worker-class sync --bind "127.0.0.1:$pool_port" --backlog 4096 --timeout 0 --worker-tmp-dir "$RUN"
    app:application)
  ;;
jvm)
  # The flags orchestrator/lab/local/referenceJvm.ts gives (see there for why each).
  cmd=(java "-Xmx${heap_mb}m" "-Xms${heap_mb}m" "$gc_flag" -XX:ErrorFile=/dev/null -XX:-UsePerfData
    -Dsun.net.httpserver.nodelay=true -cp "$REF/jvm/classes" RefServer host=0.0.0.0 "port=$port"
    "metricsPort=$metrics_port" "workers=$workers" "workMs=$work_ms" "cpuMs=$cpu_ms"
    "allocBytes=$alloc" "queue=$queue")
  ;;
esac
cd "$RUN"
if [ "$kind" = jvm ]; then
  [ -z "$dry" ] || { show "${cmd[@]}"; exit 0; }
  exec "${cmd[@]}"
fi
if [ -n "$dry" ]; then
  show "${pool[@]}"
  show "${nginx[@]}"
  [ ${#metrics[@]} -eq 0 ] || show "${metrics[@]}"
  exit 0
fi
serve_behind_nginx

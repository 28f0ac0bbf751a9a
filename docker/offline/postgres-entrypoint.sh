#!/bin/sh
set -e
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  initdb -D "$PGDATA" -U "${POSTGRES_USER:-postgres}" -A trust -E UTF8 --no-sync >/dev/null
  printf "listen_addresses = '*'\n" >> "$PGDATA/postgresql.conf"
  printf "host all all all trust\n" >> "$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  for f in /docker-entrypoint-initdb.d/*.sql; do
    [ -e "$f" ] && psql -v ON_ERROR_STOP=1 -U "${POSTGRES_USER:-postgres}" -d postgres -q -f "$f"
  done
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
fi
if [ "$1" = postgres ]; then shift; exec postgres -D "$PGDATA" "$@"; fi
exec "$@"

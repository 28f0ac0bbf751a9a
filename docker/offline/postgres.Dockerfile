# Stands in for the official postgres:16.4 image (docker-compose.yml's default) where no image
# registry is reachable. Alike where a trigger or the lab can see it: STOPSIGNAL SIGINT (a `docker
# stop` is Postgres's fast shutdown, not a 10 s wait and a SIGKILL), the data directory
# /var/lib/postgresql/data as a VOLUME, PGDATA, port 5432, pg_isready for the healthcheck, and an
# entry point that initdb's on first start and runs /docker-entrypoint-initdb.d/*.sql.
# Differs: Debian bookworm's PostgreSQL 15 (not 16.4); it starts as the postgres user (the official
# entry point starts as root and drops to postgres); trust auth only (POSTGRES_PASSWORD is ignored).
ARG BASE
FROM ${BASE}
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql-15 \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /var/lib/postgresql/data /var/run/postgresql /docker-entrypoint-initdb.d \
    && chown -R postgres:postgres /var/lib/postgresql /var/run/postgresql
COPY postgres-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin PGDATA=/var/lib/postgresql/data
VOLUME /var/lib/postgresql/data
USER postgres
EXPOSE 5432
STOPSIGNAL SIGINT
ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]
CMD ["postgres"]

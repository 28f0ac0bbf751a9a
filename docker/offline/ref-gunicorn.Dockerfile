# The gunicorn reference lab as an image (issue 34, point 3): Debian bookworm's gunicorn with c
# sync workers running services/reference/gunicorn/app.py on a loopback port of its own (8000),
# behind Debian's nginx on the load's port (services/reference/nginx/front.conf with
# gunicorn/nginx-locations.conf), as on the local runtime, started by reference-entrypoint.sh
# from METABENCH_* settings (see there). Port 8080: the load, through nginx (/health does no
# work); 9100: /metrics, served by gunicorn's master (python3-prometheus-client, summing the
# workers' multiprocess files): received from nginx's stub_status, completed and busy workers
# from the workers, the accept queue from the kernel's /proc/net/tcp. Runs as root, as the local
# runtime does under sudo: nginx's worker drops to nobody.
ARG BASE
FROM ${BASE}
# policy-rc.d: nginx's postinst starts no service during the build.
RUN printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d \
    && apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nginx gunicorn python3-prometheus-client \
    && apt-get clean && rm -rf /var/lib/apt/lists/* /usr/share/doc /usr/share/man /etc/nginx/sites-enabled/* \
    && rm /usr/sbin/policy-rc.d && nginx -v && gunicorn --version
COPY gunicorn /opt/metabench/reference/gunicorn
COPY nginx /opt/metabench/reference/nginx
COPY reference-entrypoint.sh /usr/local/bin/reference-entrypoint.sh
EXPOSE 8080 9100
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/reference-entrypoint.sh", "gunicorn"]

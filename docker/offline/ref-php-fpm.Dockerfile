# The PHP-FPM reference lab as an image (issue 34, point 3): Debian bookworm's nginx and
# php8.2-fpm (a static pool of c children behind nginx over FastCGI), configured from the same
# files as on the local runtime (services/reference/php-fpm/) by reference-entrypoint.sh from
# METABENCH_* settings (see there). Port 8080: the load (/health does no work); 9100: /metrics,
# the bench's series from nginx's stub_status and FPM's status page (reference-fpm-metrics.php on
# PHP's own server, php8.2-cli, which php8.2-fpm depends on). Runs as root, as the local runtime
# does under sudo: the pool drops to www-data, nginx's worker to nobody.
ARG BASE
FROM ${BASE}
# policy-rc.d: the packages' postinst scripts start no service during the build;
# systemd-standalone-tmpfiles meets php8.2-fpm's "systemd | systemd-tmpfiles" without systemd.
RUN printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d \
    && apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nginx php8.2-fpm systemd-standalone-tmpfiles \
    && apt-get clean && rm -rf /var/lib/apt/lists/* /usr/share/doc /usr/share/man /etc/nginx/sites-enabled/* \
    && rm /usr/sbin/policy-rc.d && nginx -v && php-fpm8.2 -v >/dev/null
COPY php-fpm /opt/metabench/reference/php-fpm
COPY nginx /opt/metabench/reference/nginx
COPY reference-fpm-metrics.php /opt/metabench/reference/php-fpm/fpm-metrics.php
COPY reference-entrypoint.sh /usr/local/bin/reference-entrypoint.sh
EXPOSE 8080 9100
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/reference-entrypoint.sh", "php-fpm"]

# The JVM reference lab as an image (issue 34, point 3): services/reference/jvm/RefServer.java (the
# JDK's HttpServer on a fixed pool of c threads, requests that hold declared bytes, a bounded heap)
# compiled by Debian bookworm's OpenJDK 17 in a build stage, which also jlinks a runtime of just the
# three modules it uses (java.base, java.management for the MXBeans, jdk.httpserver): the image
# carries that, not the JDK. (--strip-java-debug-attributes, not --strip-debug: that one also
# runs objcopy on the native libraries, which Debian ships stripped already.) Started by reference-entrypoint.sh from METABENCH_* settings (see
# there) with the local runtime's JVM flags. Port 8080: the load (/health does no work); 9100:
# /metrics from the JVM's MXBeans (GC time per second among them).
ARG BASE
FROM ${BASE} AS jdk
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends openjdk-17-jdk-headless \
    && rm -rf /var/lib/apt/lists/*
COPY jvm/RefServer.java /src/RefServer.java
RUN javac -d /classes -Xlint:all /src/RefServer.java \
    && jlink --add-modules java.base,java.management,jdk.httpserver --strip-java-debug-attributes --no-man-pages \
       --no-header-files --compress=2 --output /jre && /jre/bin/java --list-modules

FROM ${BASE}
COPY --from=jdk /jre /opt/jre
COPY --from=jdk /classes /opt/metabench/reference/jvm/classes
COPY reference-entrypoint.sh /usr/local/bin/reference-entrypoint.sh
ENV PATH=/opt/jre/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
EXPOSE 8080 9100
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/reference-entrypoint.sh", "jvm"]

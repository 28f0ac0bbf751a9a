# Stands in for Toxiproxy where its image cannot be had: our fault proxy (Toxiproxy 2.12's API)
# behind the same entry points as the real image (/toxiproxy with Go-style flags, /toxiproxy-cli list).
ARG API_IMAGE
FROM ${API_IMAGE}
COPY toxiproxy toxiproxy-cli /
ENTRYPOINT ["/toxiproxy"]
CMD ["-host=0.0.0.0"]

#!/bin/sh
# Runs one reference server's master process ("$@") and stops it when metabench goes away,
# however metabench ended (a crash, SIGKILL): metabench holds this script's stdin open as a
# pipe, so the pipe's end of file means metabench is gone, and the server gets SIGTERM
# (nginx, php-fpm, gunicorn and the JVM each stop their workers on it). SIGTERM or SIGINT
# to this script is passed on the same way; it exits when the server has, first removing
# the server's temporary directory if METABENCH_GUARD_REMOVE names one of metabench's.
exec 3<&0
"$@" </dev/null 3<&- &
pid=$!
(
  while read -r _line; do :; done
  kill -TERM "$pid" 2>/dev/null
) <&3 &
watcher=$!
exec 3<&-
trap 'kill -TERM "$pid" 2>/dev/null' TERM INT
code=0
while kill -0 "$pid" 2>/dev/null; do
  wait "$pid"
  code=$?
done
kill "$watcher" 2>/dev/null
wait "$watcher" 2>/dev/null
case "${METABENCH_GUARD_REMOVE:-}" in
*/metabench-ref-*) rm -rf "$METABENCH_GUARD_REMOVE" ;;
esac
exit "$code"

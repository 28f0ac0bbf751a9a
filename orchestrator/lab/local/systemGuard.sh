#!/bin/sh
# Runs one component of your own system (system.processes[]: "$1", by sh -c) in a process
# group of its own, and stops that whole group when metabench goes away, however metabench
# ended (a crash, SIGKILL): metabench holds this script's stdin open as a pipe, so the pipe's
# end of file means it is gone, and the group gets SIGCONT (it may be paused) then SIGTERM,
# then SIGKILL after 5 s. SIGTERM or SIGINT to this script stops the group the same way. The
# first line it prints names the group, for metabench's pause, kill and stop.
exec 3<&0
setsid sh -c "$1" </dev/null 3<&- &
pid=$!
echo "metabench-group $pid"
killer=
stop_group() {
  kill -CONT "-$pid" 2>/dev/null
  kill -TERM "-$pid" 2>/dev/null
  (sleep 5; kill -KILL "-$pid" 2>/dev/null) &
  killer=$!
}
(
  while read -r _line; do :; done
  kill -CONT "-$pid" 2>/dev/null
  kill -TERM "-$pid" 2>/dev/null
  sleep 5
  kill -KILL "-$pid" 2>/dev/null
) <&3 &
watcher=$!
exec 3<&-
trap 'stop_group' TERM INT
code=0
while kill -0 "$pid" 2>/dev/null; do
  wait "$pid"
  code=$?
done
# Nothing of the group is left to kill later (its id could be another's by then).
kill "$watcher" $killer 2>/dev/null
exit "$code"

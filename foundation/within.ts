/**
 * Runs `work` with a signal that aborts after `ms`, through a timer that keeps the process
 * alive until then. AbortSignal.timeout's timer does not (it is unref'd): a fetch that stalls
 * with no socket of its own left — seen with Node 20's fetch against docker-proxy, which
 * accepts a connection for a container still starting and closes it — then leaves nothing on
 * the event loop, and the process ends with the promise pending and nothing said. Here the
 * timer fires, the signal aborts, and the caller gets its TimeoutError.
 */
export async function within<T>(ms: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ctl = new AbortController();
  // eslint-disable-next-line no-restricted-globals -- a network call's limit, in real time
  const timer = setTimeout(
    () => ctl.abort(new DOMException(`The operation was aborted due to timeout (${ms} ms)`, 'TimeoutError')),
    ms,
  );
  try {
    return await work(ctl.signal);
  } finally {
    clearTimeout(timer);
  }
}

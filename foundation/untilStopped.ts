/**
 * Serves until SIGTERM or SIGINT (or, with `exitWithParent`, until stdin closes: the
 * parent that holds its other end has gone), then closes, giving the close 2 s at most.
 * The lab's standalone services (fault proxy, LLM stub) end this way.
 */
export function untilStopped(close: () => Promise<void>, exitWithParent: boolean): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = (): void => {
      void close().then(resolve);
      // eslint-disable-next-line no-restricted-globals -- a process's own end, in real time
      setTimeout(resolve, 2000).unref();
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    if (exitWithParent) {
      process.stdin.on('end', stop);
      process.stdin.on('error', stop);
      process.stdin.resume();
    }
  });
}

/**
 * A scrape that got part of a component's series: its /metrics did not answer, but some
 * of its figures come from elsewhere (the JVM's GC log, written by the VM at every pause,
 * while a JVM collecting all the time cannot answer its own /metrics). `text` holds what
 * was read, in Prometheus text; the scraper records those series and leaves the rest null.
 */
export class PartialScrapeError extends Error {
  constructor(
    readonly text: string,
    cause: unknown,
  ) {
    super(`partial scrape: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'PartialScrapeError';
  }
}

/** What a ResponseParser reports, in order: one head, its body's pieces, its end. */
export interface ResponseSink {
  /** The head is complete. `eventStream`: Content-Type starts with text/event-stream. */
  onHead(status: number, keepAlive: boolean, eventStream: boolean): void;
  /** A piece of the body: `buf[start, end)`, valid only during the call. */
  onBody(buf: Buffer, start: number, end: number): void;
  onComplete(): void;
}

const enum State {
  Head,
  Length,
  ChunkSize,
  ChunkExt,
  ChunkData,
  ChunkEnd,
  Trailers,
  ToEof,
}

const CR = 13;
const LF = 10;
/** A head longer than this is refused (the server is not speaking HTTP to us). */
const MAX_HEAD = 64 * 1024;
const EVENT_STREAM = 'text/event-stream';

/**
 * An HTTP/1.x response parser for the load generator: bytes in, a head, body pieces and
 * the end out, with nothing allocated for a response whose head arrives in one read
 * (the common case on loopback). Header names are compared as bytes; only the values the
 * client acts on are decoded, and only when it will (Retry-After and Date of a 429 or
 * 503, x-shed, Keep-Alive). A head split across reads is copied until it is whole (the
 * socket reads into one buffer shared by every connection). Bodies: Content-Length,
 * chunked (extensions and trailers skipped), or up to the end of the stream (`finish`).
 * A 1xx head is skipped; 204 and 304 have no body.
 */
export class ResponseParser {
  private state = State.Head;
  /** The start of a head that did not fit in one read, copied. */
  private partial: Buffer | null = null;
  private remaining = 0;
  /** Bytes on the current trailer line (Trailers: an empty line ends the message). */
  private lineBytes = 0;
  // The last head's values, kept until the next head.
  retryAfter: string | undefined;
  date: string | undefined;
  shed = false;
  keepAliveHint: string | undefined;

  constructor(private readonly sink: ResponseSink) {}

  /** Parses `buf[start, end)`; false when the bytes are not an HTTP/1.x response. */
  execute(buf: Buffer, start: number, end: number): boolean {
    let i = start;
    while (i < end) {
      switch (this.state) {
        case State.Head: {
          if (this.partial) {
            buf = Buffer.concat([this.partial, buf.subarray(i, end)]);
            this.partial = null;
            end = buf.length;
            i = 0;
          }
          const headEnd = headEndIn(buf, i, end);
          if (headEnd < 0) {
            if (end - i > MAX_HEAD) return false;
            this.partial = Buffer.from(buf.subarray(i, end));
            return true;
          }
          if (!this.head(buf, i, headEnd + 2)) return false;
          i = headEnd + 4;
          break;
        }
        case State.Length: {
          const n = Math.min(this.remaining, end - i);
          this.sink.onBody(buf, i, i + n);
          i += n;
          if ((this.remaining -= n) === 0) this.complete();
          break;
        }
        case State.ChunkSize: {
          const c = buf[i++]!;
          const d = hexDigit(c);
          if (d >= 0) this.remaining = this.remaining * 16 + d;
          else if (c === LF) this.chunkSizeDone();
          else if (c === CR || c === 59 /* ; */ || c === 32 || c === 9) this.state = State.ChunkExt;
          else return false;
          break;
        }
        case State.ChunkExt:
          if (buf[i++] === LF) this.chunkSizeDone();
          break;
        case State.ChunkData: {
          const n = Math.min(this.remaining, end - i);
          this.sink.onBody(buf, i, i + n);
          i += n;
          if ((this.remaining -= n) === 0) this.state = State.ChunkEnd;
          break;
        }
        case State.ChunkEnd:
          if (buf[i++] === LF) this.state = State.ChunkSize;
          break;
        case State.Trailers: {
          const c = buf[i++]!;
          if (c === LF) {
            if (this.lineBytes === 0) this.complete();
            this.lineBytes = 0;
          } else if (c !== CR) this.lineBytes++;
          break;
        }
        case State.ToEof:
          this.sink.onBody(buf, i, end);
          i = end;
          break;
      }
    }
    return true;
  }

  /** The stream ended: a body that runs to its end is complete. */
  finish(): void {
    if (this.state === State.ToEof) this.complete();
  }

  private chunkSizeDone(): void {
    if (this.remaining === 0) {
      this.state = State.Trailers;
      this.lineBytes = 0;
    } else this.state = State.ChunkData;
  }

  private complete(): void {
    this.state = State.Head;
    this.remaining = 0;
    this.sink.onComplete();
  }

  /** Parses a head: `buf[s, e)` holds the status line and header lines, each ending CRLF. */
  private head(buf: Buffer, s: number, e: number): boolean {
    // HTTP/1.x SSS
    if (e - s < 12 || !startsWith(buf, s, 'HTTP/1.') || buf[s + 8] !== 32) return false;
    const d0 = digit(buf[s + 9]!);
    const d1 = digit(buf[s + 10]!);
    const d2 = digit(buf[s + 11]!);
    if (d0 < 1 || d1 < 0 || d2 < 0) return false;
    const status = d0 * 100 + d1 * 10 + d2;
    let keepAlive = buf[s + 7] !== 48; // HTTP/1.0 closes unless it says keep-alive
    let length = -1;
    let chunked = false;
    let eventStream = false;
    const throttled = status === 429 || status === 503;
    this.retryAfter = this.date = this.keepAliveHint = undefined;
    this.shed = false;
    let line = buf.indexOf(LF, s) + 1;
    while (line < e) {
      const lf = buf.indexOf(LF, line);
      const colon = buf.indexOf(58 /* : */, line);
      if (colon < 0 || colon > lf) return false;
      let vs = colon + 1;
      let ve = buf[lf - 1] === CR ? lf - 1 : lf;
      while (vs < ve && (buf[vs] === 32 || buf[vs] === 9)) vs++;
      while (ve > vs && (buf[ve - 1] === 32 || buf[ve - 1] === 9)) ve--;
      switch (colon - line) {
        case 4:
          if (throttled && this.date === undefined && named(buf, line, 'date'))
            this.date = buf.toString('latin1', vs, ve);
          break;
        case 6:
          if (named(buf, line, 'x-shed')) this.shed = true;
          break;
        case 10:
          if (named(buf, line, 'connection')) {
            if (contains(buf, vs, ve, 'close')) keepAlive = false;
            else if (contains(buf, vs, ve, 'keep-alive')) keepAlive = true;
          } else if (this.keepAliveHint === undefined && named(buf, line, 'keep-alive'))
            this.keepAliveHint = buf.toString('latin1', vs, ve);
          break;
        case 11:
          if (throttled && this.retryAfter === undefined && named(buf, line, 'retry-after'))
            this.retryAfter = buf.toString('latin1', vs, ve);
          break;
        case 12:
          if (named(buf, line, 'content-type')) eventStream = startsWith(buf, vs, EVENT_STREAM);
          break;
        case 14:
          if (named(buf, line, 'content-length')) {
            length = 0;
            for (let k = vs; k < ve; k++) {
              const d = digit(buf[k]!);
              if (d < 0) return false;
              length = length * 10 + d;
            }
          }
          break;
        case 17:
          if (named(buf, line, 'transfer-encoding')) chunked = contains(buf, vs, ve, 'chunked');
          break;
      }
      line = lf + 1;
    }
    // An interim answer (100 Continue): the real one follows.
    if (status < 200) return true;
    const noBody = status === 204 || status === 304 || (!chunked && length === 0);
    if (!noBody && !chunked && length < 0) keepAlive = false; // the body ends with the stream
    this.sink.onHead(status, keepAlive, eventStream);
    if (noBody) this.complete();
    else if (chunked) {
      this.state = State.ChunkSize;
      this.remaining = 0;
    } else if (length > 0) {
      this.state = State.Length;
      this.remaining = length;
    } else this.state = State.ToEof;
    return true;
  }
}

/**
 * Where the blank line ending a head starts (its CRLF CRLF) in `buf[s, e)`, or -1.
 * Bounded by `e`: past it the shared read buffer holds an earlier read's bytes.
 */
function headEndIn(buf: Buffer, s: number, e: number): number {
  for (let k = s + 3; k < e; k++)
    if (buf[k] === LF && buf[k - 1] === CR && buf[k - 2] === LF && buf[k - 3] === CR) return k - 3;
  return -1;
}

/** A decimal digit's value, or -1. */
function digit(c: number): number {
  return c >= 48 && c <= 57 ? c - 48 : -1;
}

function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  const l = c | 32;
  return l >= 97 && l <= 102 ? l - 87 : -1;
}

function startsWith(buf: Buffer, at: number, s: string): boolean {
  if (at + s.length > buf.length) return false;
  for (let k = 0; k < s.length; k++) if (buf[at + k] !== s.charCodeAt(k)) return false;
  return true;
}

/** Whether the header name at `at` is `lower` (lower-case ASCII), ignoring case; the length is the caller's check. */
function named(buf: Buffer, at: number, lower: string): boolean {
  for (let k = 0; k < lower.length; k++) {
    const c = buf[at + k]!;
    if ((c >= 65 && c <= 90 ? c | 32 : c) !== lower.charCodeAt(k)) return false;
  }
  return true;
}

/** Whether `buf[s, e)` contains `lower` ignoring ASCII case (a token of a header value). */
function contains(buf: Buffer, s: number, e: number, lower: string): boolean {
  for (let i = s; i + lower.length <= e; i++) if (named(buf, i, lower)) return true;
  return false;
}

/**
 * The yardstick of the simulator benchmark (benchmarks/sim.ts): a bare-bones
 * discrete-event simulation of the same queue, written to be as fast as such a loop can
 * honestly be. Poisson origins; c workers with exponential work; one FIFO queue; each
 * attempt timed out after a constant timeout and retried at once up to maxAttempts; the
 * api paused for a while (work in hand frozen, none started, the kernel holding at most
 * pauseBacklog attempts for it: the rest are lost, as a dropped SYN is retransmitted only
 * after 1 s, past a timeout shorter than that). A worker still serves an attempt whose
 * client has left (as the api does). No policies, no recorder: counts only. What it leaves
 * out (kept-alive connections, connection set-up) is what referenceSim.test.ts bounds.
 */
export interface ReferenceQueue {
  readonly ratePerS: number;
  readonly workers: number;
  readonly meanWorkMs: number;
  readonly timeoutMs: number;
  readonly maxAttempts: number;
  readonly pauseAtMs: number;
  readonly pauseMs: number;
  readonly pauseBacklog: number;
  readonly totalMs: number;
  readonly seed: number;
}

export interface ReferenceCounts {
  origins: number;
  attempts: number;
  /** Origins answered within their attempt's timeout, by the second of the answer. */
  readonly okPerS: Int32Array;
  /** Arrivals, completions and timeouts handled. */
  events: number;
}

export function referenceSim(q: ReferenceQueue): ReferenceCounts {
  let s = q.seed >>> 0; // mulberry32
  const rand = (): number => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const exp = (mean: number): number => -mean * Math.log(1 - rand());
  const out: ReferenceCounts = {
    origins: 0,
    attempts: 0,
    okPerS: new Int32Array(Math.ceil(q.totalMs / 1000)),
    events: 0,
  };
  // Attempts by id, in sending order. The timeout is constant, so attempts time out in id
  // order: a cursor finds the next one, no timer queue needed.
  let cap = 1 << 16;
  let origin = new Int32Array(cap),
    num = new Uint8Array(cap),
    waiting = new Uint8Array(cap);
  let sentAt = new Float64Array(cap),
    fifo = new Int32Array(cap); // fifo: ids in [head, tail)
  let head = 0,
    tail = 0,
    cursor = 0,
    busy = 0,
    paused = false,
    held = 0;
  // The workers' completions: a binary heap of (time, attempt id), at most c entries.
  const doneAt = new Float64Array(q.workers),
    doneId = new Int32Array(q.workers);
  const grow = <T extends Int32Array | Uint8Array | Float64Array>(a: T): T => {
    const b = new (a.constructor as new (n: number) => T)(a.length * 2);
    b.set(a);
    return b;
  };
  const start = (id: number, t: number): void => {
    const at = t + exp(q.meanWorkMs);
    let i = busy++;
    for (let p = (i - 1) >> 1; i > 0 && doneAt[p]! > at; i = p, p = (i - 1) >> 1) {
      doneAt[i] = doneAt[p]!;
      doneId[i] = doneId[p]!;
    }
    doneAt[i] = at;
    doneId[i] = id;
  };
  const send = (o: number, n: number, t: number): void => {
    if (out.attempts === cap) {
      [origin, num, waiting, sentAt, fifo] = [
        grow(origin),
        grow(num),
        grow(waiting),
        grow(sentAt),
        grow(fifo),
      ];
      cap *= 2;
    }
    const id = out.attempts++;
    origin[id] = o;
    num[id] = n;
    waiting[id] = 1;
    sentAt[id] = t;
    if (!paused && busy < q.workers) start(id, t);
    else if (!paused || held++ < q.pauseBacklog) fifo[tail++] = id; // ids only grow: the queue fits in their space
  };
  const finish = (): number => {
    const id = doneId[0]!,
      at = doneAt[--busy]!,
      last = doneId[busy]!;
    let i = 0;
    for (let c = 1; c < busy; i = c, c = 2 * i + 1) {
      if (c + 1 < busy && doneAt[c + 1]! < doneAt[c]!) c++;
      if (doneAt[c]! >= at) break;
      doneAt[i] = doneAt[c]!;
      doneId[i] = doneId[c]!;
    }
    doneAt[i] = at;
    doneId[i] = last;
    return id;
  };
  let arrival = exp(1000 / q.ratePerS),
    pauseEdge = q.pauseAtMs;
  for (;;) {
    while (cursor < out.attempts && !waiting[cursor]) cursor++;
    const timeout = cursor < out.attempts ? sentAt[cursor]! + q.timeoutMs : Infinity;
    const done = busy > 0 ? doneAt[0]! : Infinity;
    const t = Math.min(arrival, done, timeout, pauseEdge);
    if (t >= q.totalMs) return out;
    out.events++;
    if (t === pauseEdge) {
      paused = !paused;
      // A paused process's timers wait: work in hand ends the pause's length later.
      if (paused) for (let i = 0; i < busy; i++) doneAt[i]! += q.pauseMs;
      else while (busy < q.workers && head < tail) start(fifo[head++]!, t);
      pauseEdge = paused ? q.pauseAtMs + q.pauseMs : Infinity;
      held = 0;
    } else if (t === done) {
      const id = finish();
      if (waiting[id]) {
        waiting[id] = 0;
        out.okPerS[Math.floor(t / 1000)]!++;
      }
      if (!paused && head < tail) start(fifo[head++]!, t);
    } else if (t === timeout) {
      waiting[cursor] = 0;
      if (num[cursor]! < q.maxAttempts) send(origin[cursor]!, num[cursor]! + 1, t);
    } else {
      send(out.origins++, 1, t);
      arrival += exp(1000 / q.ratePerS);
    }
  }
}

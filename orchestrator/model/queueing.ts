/**
 * Closed forms of the queueing models the simulator is validated against
 * (research/metastability.md §10). Notation: λ arrival rate, μ service rate of one
 * server, c servers, a = λ/μ offered load (Erlangs), ρ = a/c utilisation. Times are in
 * the unit of 1/μ.
 */

/** Erlang B by the stable recursion B_0 = 1, B_k = a·B_{k−1} / (k + a·B_{k−1}). */
export function erlangB(c: number, a: number): number {
  let b = 1;
  for (let k = 1; k <= c; k++) b = (a * b) / (k + a * b);
  return b;
}

/** Erlang C: the probability that an arrival waits, C(c, a) = c·B / (c − a(1 − B)); needs a < c. */
export function erlangC(c: number, a: number): number {
  if (!(a < c)) return 1;
  const b = erlangB(c, a);
  return (c * b) / (c - a * (1 - b));
}

export interface QueueFigures {
  /** P(an arrival waits for a server). */
  readonly pWait: number;
  /** Mean wait in the queue. */
  readonly meanWait: number;
  /** Mean time in the system (wait + service). */
  readonly meanSojourn: number;
}

/** M/M/c (FCFS): P(wait) = C(c, a), E[Wq] = C / (cμ − λ), E[T] = E[Wq] + 1/μ. */
export function mmc(c: number, lambda: number, mu: number): QueueFigures {
  const a = lambda / mu;
  const pWait = erlangC(c, a);
  const meanWait = pWait / (c * mu - lambda);
  return { pWait, meanWait, meanSojourn: meanWait + 1 / mu };
}

/** M/G/1 by Pollaczek–Khinchine: E[Wq] = λ·E[S²] / (2(1 − ρ)); P(wait) = ρ. */
export function mg1(lambda: number, meanS: number, secondMomentS: number): QueueFigures {
  const rho = lambda * meanS;
  const meanWait = (lambda * secondMomentS) / (2 * (1 - rho));
  return { pWait: rho, meanWait, meanSojourn: meanWait + meanS };
}

/** M/D/1: E[Wq] = ρ / (2μ(1 − ρ)), half the M/M/1 wait. */
export function md1(lambda: number, mu: number): QueueFigures {
  return mg1(lambda, 1 / mu, 1 / (mu * mu));
}

/**
 * P(T > t) for M/M/c FCFS: the wait is 0 with probability 1 − C, else Exp(θ) with
 * θ = cμ − λ; the service Exp(μ) is added. (θ = μ: e^{−μt}(1 + Cμt).)
 */
export function mmcSojournTail(c: number, lambda: number, mu: number, t: number): number {
  const C = erlangC(c, lambda / mu);
  if (!(lambda < c * mu)) return 1;
  const theta = c * mu - lambda;
  if (Math.abs(theta - mu) < 1e-12 * mu) return Math.exp(-mu * t) * (1 + C * mu * t);
  return Math.exp(-mu * t) + ((C * mu) / (theta - mu)) * (Math.exp(-mu * t) - Math.exp(-theta * t));
}

/**
 * The q-quantile of the M/M/c FCFS sojourn time (wait + service): the t with
 * P(T > t) = 1 − q, by bisection on mmcSojournTail (decreasing in t). In the unit of 1/μ.
 */
export function mmcSojournQuantile(c: number, lambda: number, mu: number, q: number): number {
  if (!(lambda < c * mu)) return Infinity;
  const target = 1 - q;
  let lo = 0;
  let hi = 1 / mu;
  while (mmcSojournTail(c, lambda, mu, hi) > target) hi *= 2;
  for (let i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
    const mid = (lo + hi) / 2;
    if (mmcSojournTail(c, lambda, mu, mid) > target) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

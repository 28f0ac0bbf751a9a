import { InvalidArgumentError } from 'commander';

export function positiveNumber(flag: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0)
      throw new InvalidArgumentError(`${flag} takes a number greater than 0 (got "${v}")`);
    return n;
  };
}

export function wholeNumber(flag: string, min: number, max: number) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(`${flag} takes a whole number from ${min} to ${max} (got "${v}")`);
    return n;
  };
}

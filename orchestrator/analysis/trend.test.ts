import { test } from 'node:test';
import assert from 'node:assert/strict';
import { seededRng } from '../../foundation/rng.js';
import { mannKendall, olsTrend, senSlope, trendOf } from './trend.js';

/**
 * Monthly rainfall at Bogra, 1981–2010 (mm; null = missing): the "Bogra" column of
 * tests/data/Monthly Rainfall.csv in pyMannKendall (Hussain & Mahmud 2019, the
 * Mann–Kendall reference implementation in Python). Its tests/test_pymannkendall.py
 * documents the results below for original_test and hamed_rao_modification_test on this
 * column with the missing months skipped (the series compacted, as pyMannKendall does).
 */
const BOGRA: readonly (number | null)[] = [
  32,
  20,
  25,
  189,
  240,
  193,
  379,
  278,
  301,
  0,
  0,
  82,
  0,
  4,
  null,
  null,
  121,
  234,
  360,
  262,
  120,
  30,
  11,
  1,
  7,
  3,
  31,
  31,
  355,
  102,
  248,
  274,
  308,
  null,
  5,
  26,
  11,
  16,
  6,
  48,
  388,
  539,
  431,
  272,
  404,
  186,
  0,
  2,
  0,
  4,
  1,
  54,
  272,
  459,
  235,
  164,
  365,
  135,
  2,
  null,
  null,
  4,
  0,
  128,
  210,
  163,
  446,
  225,
  462,
  467,
  19,
  13,
  0,
  3,
  17,
  132,
  178,
  338,
  525,
  623,
  145,
  31,
  19,
  3,
  0,
  29,
  25,
  87,
  259,
  756,
  486,
  180,
  292,
  43,
  92,
  1,
  0,
  16,
  2,
  0,
  130,
  253,
  594,
  111,
  273,
  30,
  0,
  4,
  0,
  27,
  24,
  41,
  292,
  378,
  499,
  265,
  320,
  227,
  4,
  0,
  4,
  14,
  8,
  48,
  416,
  240,
  404,
  207,
  733,
  105,
  0,
  112,
  0,
  14,
  0,
  30,
  140,
  202,
  289,
  159,
  424,
  106,
  3,
  0,
  65,
  3,
  14,
  58,
  268,
  466,
  432,
  266,
  240,
  95,
  1,
  0,
  10,
  26,
  4,
  114,
  94,
  289,
  173,
  208,
  263,
  156,
  5,
  0,
  16,
  16,
  14,
  0,
  111,
  475,
  534,
  432,
  471,
  117,
  70,
  1,
  3,
  28,
  7,
  401,
  184,
  283,
  338,
  171,
  335,
  176,
  0,
  0,
  10,
  11,
  9,
  140,
  102,
  208,
  298,
  245,
  220,
  29,
  2,
  27,
  10,
  13,
  26,
  84,
  143,
  367,
  749,
  563,
  283,
  353,
  10,
  0,
  0,
  0,
  0,
  9,
  246,
  265,
  343,
  429,
  168,
  133,
  17,
  0,
  18,
  35,
  76,
  158,
  272,
  250,
  190,
  289,
  466,
  84,
  0,
  0,
  0,
  0,
  0,
  22,
  217,
  299,
  185,
  115,
  344,
  203,
  8,
  null,
  null,
  0,
  5,
  284,
  123,
  254,
  476,
  496,
  326,
  27,
  20,
  0,
  4,
  53,
  72,
  113,
  214,
  364,
  219,
  220,
  156,
  264,
  0,
  13,
  0,
  0,
  45,
  90,
  137,
  638,
  529,
  261,
  206,
  251,
  0,
  0,
  5,
  9,
  58,
  72,
  138,
  130,
  471,
  328,
  356,
  523,
  0,
  1,
  0,
  0,
  12,
  143,
  193,
  184,
  192,
  138,
  174,
  69,
  1,
  0,
  0,
  18,
  25,
  28,
  92,
  732,
  320,
  256,
  302,
  131,
  15,
  0,
  27,
  0,
  22,
  20,
  213,
  393,
  474,
  374,
  109,
  159,
  0,
  0,
  0,
  3,
  3,
  49,
  205,
  128,
  194,
  570,
  169,
  89,
  0,
  0,
  0,
  0,
  0,
  26,
  185,
  286,
  92,
  225,
  244,
  190,
  3,
  20,
];
const bogra = BOGRA.filter((x): x is number => x !== null);

const close = (a: number, b: number, rel = 1e-9): void =>
  assert.ok(Math.abs(a - b) <= rel * Math.max(1, Math.abs(b)), `${a} vs ${b}`);

test("the original Mann-Kendall test matches pyMannKendall's documented output", () => {
  const r = mannKendall(bogra, { lag: 0 })!;
  assert.equal(r.n, 353);
  assert.equal(r.s, -1959);
  close(r.varS, 4889800.333333333);
  close(r.z, -0.8854562842589916);
  close(r.p, 0.37591058740506833);
  close(r.tau, -0.03153167653875869);
  close(r.slope, -0.0064516129032258064);
});

test("the Hamed-Rao modified test matches pyMannKendall's documented output (all lags, and lag 3)", () => {
  const all = mannKendall(bogra)!;
  close(all.varS, 257403.38678462413);
  close(all.z, -3.859273515045842);
  close(all.p, 0.00011372459883540742, 1e-7);
  const lag3 = mannKendall(bogra, { lag: 3 })!;
  close(lag3.varS, 14226812.425138814);
  close(lag3.z, -0.5191093899188985);
  close(lag3.p, 0.603684460662274);
});

test("Sen's slope and interval match scipy.stats.theilslopes (scipy 1.17.1) on the first 30 months", () => {
  // theilslopes(y, alpha=0.95) → slope 0.21428571428571427, low -3.625, high 5.0;
  // alpha=0.90 → low -2.65, high 4.0 (run on this machine; scipy's interval is Sen's).
  const y = bogra.slice(0, 30);
  const v = mannKendall(y, { lag: 0 })!.varS;
  const s95 = senSlope(y, v, 0.95)!;
  close(s95.slope, 0.21428571428571427);
  assert.deepEqual([s95.low, s95.high], [-3.625, 5]);
  const s90 = senSlope(y, v, 0.9)!;
  assert.deepEqual([s90.low, s90.high], [-2.65, 4]);
  // scipy's intercept, 88.89285714285714, is medianY − slope × medianT.
  close(s95.medianY - s95.slope * s95.medianT, 88.89285714285714);
});

/** A stationary AR(1) series around `level` (Gaussian innovations, seeded). */
function ar1(seed: number, n: number, phi: number, level: number, sd: number): number[] {
  const rng = seededRng(seed, 'ar1');
  const gauss = (): number => Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());
  let e = (gauss() * sd) / Math.sqrt(1 - phi * phi);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    out.push(level + e);
    e = phi * e + sd * gauss();
  }
  return out;
}

test('a flat AR(1) queue (φ = 0.8) has no trend by the robust test where the least-squares t test finds one', () => {
  // Seed 31 is the first of 1..2000 on which OLS calls a 40-second flat series rising
  // and the robust test does not.
  const y = ar1(31, 40, 0.8, 100, 5);
  const ols = olsTrend(y)!;
  const robust = trendOf(y)!;
  assert.equal(ols.rising, true, `OLS t = ${ols.t}`);
  assert.equal(robust.rising, false, `MK z = ${robust.z}`);
  assert.ok(robust.nOverNStar > 2, `the correction inflates Var(S): n/n* = ${robust.nOverNStar}`);
  // Over 400 seeds the OLS test calls about a third of these flat series rising, the
  // robust one about a tenth (nominal 5%: 40 s of a φ = 0.8 series hold about 4
  // independent values, which no test can fully make up for).
  let o = 0;
  let r = 0;
  for (let s = 1; s <= 400; s++) {
    const x = ar1(s, 40, 0.8, 100, 5);
    if (olsTrend(x)!.rising) o++;
    if (trendOf(x)!.rising) r++;
  }
  assert.ok(o / 400 > 0.25, `OLS false trends ${o / 400}`);
  assert.ok(r / 400 < 0.15, `robust false trends ${r / 400}`);
  // Independent noise keeps the nominal level.
  let w = 0;
  for (let s = 1; s <= 400; s++) if (trendOf(ar1(s, 40, 0, 100, 5))!.rising) w++;
  assert.ok(w / 400 < 0.08, `white-noise false trends ${w / 400}`);
});

test('a clean rising line is rising, a falling one falling, a flat one neither', () => {
  const up = trendOf(Array.from({ length: 20 }, (_, i) => 3 + 2 * i))!;
  assert.equal(up.slope, 2);
  assert.deepEqual([up.slopeLow, up.slopeHigh], [2, 2]);
  assert.equal(up.rising, true);
  assert.equal(up.falling, false);
  assert.equal(up.last, 41);
  const down = trendOf(Array.from({ length: 20 }, (_, i) => 50 - i))!;
  assert.equal(down.falling, true);
  const flat = trendOf(Array<number>(20).fill(0))!;
  assert.equal(flat.rising, false);
  assert.equal(flat.falling, false);
  assert.equal(flat.slope, 0);
});

test('a slope of 1/s through independent noise is rising; the noise alone is not', () => {
  const rng = seededRng(7, 'trend');
  const noise = Array.from({ length: 30 }, () => (rng.next() - 0.5) * 20);
  assert.equal(trendOf(noise.map((n) => 100 + n))!.rising, false);
  const rising = trendOf(noise.map((n, i) => 100 + n + 1 * i))!;
  assert.equal(rising.rising, true);
  assert.ok(rising.slopeLow < 1 && rising.slopeHigh > 1, `${rising.slopeLow}..${rising.slopeHigh}`);
});

test('nulls are skipped and keep their times; fewer than 3 values give no trend', () => {
  assert.equal(trendOf([1, null, 2]), null);
  const t = trendOf([0, null, 2, null, 4])!;
  assert.equal(t.n, 3);
  assert.equal(t.slope, 1);
});

test('a stationary queue clipped at its bound: the one-sided test alone calls some tails falling, none with its Sen interval below 0', () => {
  // 24 s tails of a full listen backlog (4097) that dips a few under it 30% of the time:
  // no trend at all. The outcome counts a backlog as shrinking only when both agree.
  let falling = 0;
  let shrinking = 0;
  for (let seed = 1; seed < 2000; seed++) {
    const rng = seededRng(seed);
    const ys = Array.from({ length: 24 }, () =>
      rng.next() < 0.7 ? 4097 : 4097 - Math.ceil(rng.next() * 12),
    );
    const t = trendOf(ys)!;
    if (t.falling) falling++;
    if (t.falling && t.slopeHigh < 0) shrinking++;
  }
  assert.ok(falling > 20, `one-sided falls: ${falling} of 1999`);
  assert.equal(shrinking, 0);
});

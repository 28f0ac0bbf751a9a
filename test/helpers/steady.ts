/** The default steady state, held in the baseline (validity check 2 passes): a fixture of validity tests. */
export const STEADY = [
  {
    metric: 'goodput',
    window: 'baseline',
    threshold: '>= 95% offered (default)',
    value: 1,
    samples: 60,
    verdict: 'pass' as const,
    default: true as const,
  },
];

import { z } from 'zod';
import {
  balance as balanceLayer,
  BALANCE_POLICIES,
  type BalancePolicy,
} from '../../../bench/policy/balance.js';
import { clientPolicy } from './kind.js';

/**
 * `balance:` how the client spreads its attempts over the api replicas (the load
 * balancer is part of the load model). Below retry and hedge: each try and each hedge is
 * balanced anew; below the breaker and the throttle: an attempt they refuse takes no
 * replica; above observe: the recorded attempt carries its replica. It acts only with
 * more than one replica (lab.api.replicas); with one there is no layer.
 */
export const balance = clientPolicy({
  fields: {
    /** round-robin | random | least-outstanding | p2c | least-latency; round-robin when absent. */
    balance: z
      .enum(BALANCE_POLICIES, {
        error: `expected one of ${BALANCE_POLICIES.join(', ')}`,
      })
      .optional(),
  },
  example: 'balance: p2c',
  model: ({ balance: b }): { readonly balance?: BalancePolicy } => (b ? { balance: b } : {}),
  layer: {
    at: 55,
    build: (m) =>
      m.replicas > 1 ? balanceLayer({ policy: m.balance ?? 'round-robin', replicas: m.replicas }) : undefined,
  },
  describe: { at: 75, text: ({ balance: b }) => b && `${b} balancing over the api replicas` },
});

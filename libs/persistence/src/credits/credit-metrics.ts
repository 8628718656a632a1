import { Counter, type Registry } from 'prom-client';
import { LOOKUP_KINDS, type LookupKind } from '@dossier/domain';

export const CREDIT_PHASES = ['reserved', 'captured', 'released'] as const;
export type CreditPhase = (typeof CREDIT_PHASES)[number];

/** Credits a ledger entry moved: reserved when a lookup is accepted, captured or released when it settles. */
export interface CreditMovement {
  kind: LookupKind;
  phase: CreditPhase;
  credits: number;
}

/** Told of every credit movement SearchesRepository makes, once it is committed. */
export type CreditObserver = (movement: CreditMovement) => void;

/**
 * `dossier_credits_total{kind, phase}` in `registry`: credits reserved, captured and released, counted
 * by whichever process moves them (the gateway reserves and releases what it cannot queue; the worker
 * captures and releases). Every kind × phase starts at 0, so rates exist before the first lookup.
 */
export function creditCounter(registry: Registry): CreditObserver {
  const counter = new Counter<'kind' | 'phase'>({
    name: 'dossier_credits_total',
    help: 'Credits moved through the ledger by this process, by lookup kind and phase (reserved, captured, released)',
    labelNames: ['kind', 'phase'],
    registers: [registry],
  });
  for (const kind of LOOKUP_KINDS) for (const phase of CREDIT_PHASES) counter.inc({ kind, phase }, 0);
  return ({ kind, phase, credits }) => counter.inc({ kind, phase }, credits);
}

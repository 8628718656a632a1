/** The variable a process's faults come in (a JSON FaultSpec): written by withFaults, read by fault-preload only. */
export const FAULTS_ENV = 'DOSSIER_TEST_FAULTS';

/** What fault-preload injects, named by the edges it wraps (queue names, statement text). ADR 0059. */
export interface FaultSpec {
  /** BullMQ adds to these queues: held `holdMs` before they are sent; or sent, then failed `loseReplyMs` later. */
  adds?: { queues: string[]; holdMs?: number; loseReplyMs?: number };
  /** The process SIGKILLs itself at its first add to one of these queues (what it committed before stays). */
  killOnAdd?: { queues: string[] };
  /** Jobs added to these queues get this many attempts. */
  attempts?: { queues: string[]; attempts: number };
  /** pg statements whose text starts with `startsWith`: held `ms` before they are sent (in their transaction). */
  statements?: { startsWith: string; ms: number }[];
  /**
   * Lookup jobs of these queues held `ms`: `before` their fan-out to the providers (counted as running), or
   * `after` their processor returned (settled), before BullMQ is told they completed.
   */
  lookups?: { queues: string[]; at: 'before' | 'after'; ms: number };
}

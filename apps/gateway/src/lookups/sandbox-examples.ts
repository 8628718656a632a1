import type { LookupKind } from '@dossier/domain';
import { SANDBOX_CASES } from '@dossier/contracts';
import type { ApiDocOptions } from '../openapi/api-doc.decorator';

/**
 * The test keys' synthetic inputs of one kind as named request examples of its endpoint (ADR 0021):
 * "Try it out" in /docs offers each, with the answer a `dsk_test_…` key gets for it.
 */
export function sandboxExamples(kind: LookupKind): NonNullable<ApiDocOptions['bodyExamples']> {
  return Object.fromEntries(
    SANDBOX_CASES.filter((c) => c.kind === kind).map((c) => [
      `test_key_${c.answer
        .replace(/\(.*\)/, '')
        .trim()
        .replace(/[^a-z0-9]+/gi, '_')}`,
      { summary: `Test key: ${c.answer}`, value: c.body },
    ]),
  );
}

import { createHash } from 'node:crypto';

/** Identifies a request body for Idempotency-Key reuse checks: route + canonical JSON. */
export function hashRequest(route: string, body: unknown): string {
  return createHash('sha256').update(route).update('\n').update(canonicalJson(body)).digest('hex');
}

/** A piece of canonical JSON still to write: a value, or text around values. */
type Part = { value: unknown } | { text: string };

/**
 * JSON with object keys sorted, so key order does not make two equal bodies differ. Walks with an explicit
 * stack, not recursion: a body is hashed before its items are validated (a batch), and a 64 KiB body can
 * nest thousands of levels deep.
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  const stack: Part[] = [{ value }];
  const pushAll = (parts: Part[]) => {
    for (let i = parts.length - 1; i >= 0; i--) stack.push(parts[i]!);
  };
  while (stack.length > 0) {
    const part = stack.pop()!;
    if ('text' in part) {
      out.push(part.text);
      continue;
    }
    const v = part.value;
    if (Array.isArray(v)) {
      pushAll([
        { text: '[' },
        ...v.flatMap((x, i): Part[] => (i === 0 ? [{ value: x }] : [{ text: ',' }, { value: x }])),
        { text: ']' },
      ]);
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      pushAll([
        { text: '{' },
        ...entries.flatMap(([k, x], i): Part[] => [
          { text: `${i === 0 ? '' : ','}${JSON.stringify(k)}:` },
          { value: x },
        ]),
        { text: '}' },
      ]);
    } else {
      out.push(JSON.stringify(v ?? null));
    }
  }
  return out.join('');
}

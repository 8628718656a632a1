import type { z } from 'zod';
import { DomainError, type FieldIssue } from '@dossier/domain';

function fieldOf(path: readonly PropertyKey[]): string {
  return path.map(String).join('.') || 'body';
}

/** zod issues → the contract's `details`: one entry per field, in words an integrator can act on. */
export function issuesToDetails(issues: readonly z.core.$ZodIssue[]): FieldIssue[] {
  const details: FieldIssue[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys)
        details.push({ field: fieldOf([...issue.path, key]), issue: 'is not a known field' });
      continue;
    }
    if (issue.code === 'invalid_type' && issue.path.length === 0) {
      details.push({ field: 'body', issue: 'must be a JSON object' });
      continue;
    }
    if (issue.code === 'invalid_type' && (issue as { input?: unknown }).input === undefined) {
      details.push({ field: fieldOf(issue.path), issue: 'is required' });
      continue;
    }
    details.push({ field: fieldOf(issue.path), issue: issue.message });
  }
  return details;
}

/** Validates a parsed JSON body against a strict schema, or throws `validation_error` naming each field. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const result = schema.safeParse(body ?? {});
  if (!result.success) throw DomainError.validation(issuesToDetails(result.error.issues));
  return result.data;
}

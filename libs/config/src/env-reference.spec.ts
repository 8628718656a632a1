import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '@dossier/testing';
import { ENV_NAMES, ENV_SCHEMAS } from './env';
import { envReference, undescribedVariables } from './env-reference';

describe('the configuration reference (docs/configuration.md)', () => {
  it('describes every variable an app reads', () => {
    expect(undescribedVariables()).toEqual([]);
  });

  it('is what `npm run docs:config` makes from the schemas now (run it after changing a variable)', () => {
    const written = readFileSync(join(REPO_ROOT, 'docs/configuration.md'), 'utf8');
    expect(written).toBe(envReference());
  });

  it("lists every variable of every app, each under a heading that says it is the app's", () => {
    const reference = envReference();
    const sections = reference.split(/^## /m).slice(1);
    const listed = (title: string) =>
      [...(sections.find((s) => s.startsWith(`${title}\n`)) ?? '').matchAll(/^\| `([A-Z0-9_]+)` \|/gm)].map(
        (m) => m[1],
      );
    const everyApp = listed('Every app');
    expect(everyApp).toContain('DATABASE_URL');
    for (const [app, title] of [
      ['gateway', 'Gateway'],
      ['worker', 'Worker'],
      ['cli', 'CLI'],
    ] as const) {
      expect([...everyApp, ...listed(title)].sort()).toEqual([...ENV_NAMES[app]].sort());
    }
    expect(Object.keys(ENV_SCHEMAS)).toEqual(['gateway', 'worker', 'cli']);
  });

  it('shows each default as an operator writes it', () => {
    const row = (name: string) => new RegExp(`^\\| \`${name}\` \\| ([^|]+) \\|`, 'm').exec(envReference())?.[1];
    expect(row('PORT')).toBe('`3000`');
    expect(row('LOGIN_FAILURE_LIMIT')).toBe('`10/10m`');
    expect(row('LOOKUP_QUEUES')).toBe('`person,company,email,phone`');
    expect(row('ADMIN_USER')).toBe('unset');
  });
});

import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { ENV_NAMES } from '@dossier/config';
import { PROVIDERS, settingKeysOf } from '@dossier/providers';
import { ENTRY_POINTS, type Dossier } from './dist';
import { REPO_ROOT } from './repo-root';

export { ENTRY_POINTS, type Dossier } from './dist';

/**
 * Readers for the deployment files (docker-compose.yml, the Dockerfile's build context, deploy/k8s/),
 * which no test can run here (no Docker engine, no cluster): their tests check them against the code.
 */

/** Which app a container command (`node <entry point> …`) runs, or null for another program. */
export function appOf(command: readonly string[] | undefined): Dossier | null {
  if (!command || command[0] !== 'node') return null;
  const app = (Object.keys(ENTRY_POINTS) as Dossier[]).find((a) => ENTRY_POINTS[a] === command[1]);
  return app ?? null;
}

/**
 * Variables a deployment file may set for an app: its env schema's keys (libs/config), and for the
 * worker every provider's settings.
 */
export function envNamesOf(app: Dossier): Set<string> {
  const names = new Set(ENV_NAMES[app]);
  if (app === 'worker') for (const p of PROVIDERS) for (const k of settingKeysOf(p)) names.add(k);
  return names;
}

// ---------------------------------------------------------------------------------------------- compose

export interface ComposeHealthcheck {
  test: string[] | string;
  interval?: string;
  timeout?: string;
  retries?: number;
  start_period?: string;
}

export interface ComposeService {
  image?: string;
  build?: unknown;
  pull_policy?: string;
  command?: string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  ports?: (string | number | Record<string, unknown>)[];
  expose?: (string | number)[];
  depends_on?: Record<string, { condition?: string }> | string[];
  healthcheck?: ComposeHealthcheck;
  restart?: string;
  stop_grace_period?: string;
  [key: string]: unknown;
}

export interface ComposeFile {
  name?: string;
  services: Record<string, ComposeService>;
  [key: string]: unknown;
}

export const COMPOSE_FILE = join(REPO_ROOT, 'docker-compose.yml');

/** docker-compose.yml as Compose reads it: YAML merge keys (`<<:`) resolved, nothing interpolated yet. */
export function readCompose(file = COMPOSE_FILE): ComposeFile {
  return parse(readFileSync(file, 'utf8'), { merge: true }) as ComposeFile;
}

/**
 * Compose's interpolation: `${VAR}`, `${VAR:-default}` (default when unset or empty), `${VAR-default}`
 * (default when unset), `$VAR`, and `$$` for a literal `$`, with `vars` as the shell's environment.
 */
export function interpolate<T>(value: T, vars: Readonly<Record<string, string>> = {}): T {
  if (typeof value === 'string') {
    return value.replace(
      /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
      (
        whole,
        braced: string | undefined,
        op: string | undefined,
        fallback: string | undefined,
        bare: string | undefined,
      ) => {
        if (whole === '$$') return '$';
        const name = (braced ?? bare)!;
        const set = vars[name];
        if (op === ':-') return set === undefined || set === '' ? fallback! : set;
        if (op === '-') return set === undefined ? fallback! : set;
        return set ?? '';
      },
    ) as T;
  }
  if (Array.isArray(value)) return value.map((v: unknown) => interpolate(v, vars)) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, vars)])) as T;
  }
  return value;
}

/** A service's environment as name → value (list or mapping form; null and booleans as Compose passes them). */
export function environmentOf(service: ComposeService): Record<string, string> {
  const env = service.environment ?? {};
  if (Array.isArray(env)) {
    return Object.fromEntries(env.map((e) => [e.split('=')[0]!, e.slice(e.indexOf('=') + 1)]));
  }
  return Object.fromEntries(
    Object.entries(env)
      .filter(([, v]) => v !== null)
      .map(([k, v]) => [k, String(v)]),
  );
}

/** depends_on as service → condition (the short form means `service_started`). */
export function dependenciesOf(service: ComposeService): Record<string, string> {
  const deps = service.depends_on ?? {};
  if (Array.isArray(deps)) return Object.fromEntries(deps.map((d) => [d, 'service_started']));
  return Object.fromEntries(Object.entries(deps).map(([k, v]) => [k, v.condition ?? 'service_started']));
}

/** Compose's duration (`1m30s`, `75s`, `500ms`) in milliseconds. */
export function durationMs(text: string): number {
  const units: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001 };
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|us|h|m|s)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) throw new Error(`not a duration: ${text}`);
  return parts.reduce((sum, p) => sum + Number(p[1]) * units[p[2]!]!, 0);
}

/** The container ports a service publishes on the host (short `host:container` syntax and long form). */
export function publishedContainerPorts(service: ComposeService): number[] {
  return (service.ports ?? []).map((p) => {
    if (typeof p === 'number') return p;
    if (typeof p === 'object') return Number(p['target']);
    return Number(p.split(':').pop()!.split('/')[0]);
  });
}

// ------------------------------------------------------------------------------------ Docker build context

/**
 * The repository's tracked files that `docker build .` sends, by .dockerignore's rules: Go-style globs
 * (`*`, `?`, `**`), a pattern also excluding everything under a directory it matches, `!` re-including,
 * the last matching rule deciding.
 */
export function dockerContextFiles(root = REPO_ROOT): string[] {
  const rules = readFileSync(join(root, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const include = l.startsWith('!');
      const pattern = (include ? l.slice(1) : l).replace(/^\/+|\/+$/g, '');
      const source = pattern
        .split('**')
        .map((part) =>
          part
            .replace(/[.+^${}()|[\]\\]/g, '\\$&')
            .replace(/\*/g, '[^/]*')
            .replace(/\?/g, '[^/]'),
        )
        .join('.*');
      return { include, regex: new RegExp(`^${source.replace(/\.\*\//g, '(?:.*/)?')}$`) };
    });
  const tracked = execFileSync('git', ['-C', root, 'ls-files', '-z'], { encoding: 'utf8' }).split('\0').filter(Boolean);
  return tracked.filter((file) => {
    const segments = file.split('/');
    const prefixes = segments.map((_, i) => segments.slice(0, i + 1).join('/'));
    let excluded = false;
    for (const rule of rules) if (prefixes.some((p) => rule.regex.test(p))) excluded = !rule.include;
    return !excluded;
  });
}

/** The variables a stage's `ENV name=value …` instructions set (double-quoted values unquoted), later ones winning. */
export function dockerfileEnv(lines: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of lines.filter((l) => /^ENV\s/i.test(l))) {
    for (const m of line.replace(/^ENV\s+/i, '').matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("([^"]*)"|\S*)/g)) {
      env[m[1]!] = m[3] ?? m[2]!;
    }
  }
  return env;
}

/** The Dockerfile's stages: each FROM with its alias and instructions (continuation lines joined). */
export function dockerfileStages(root = REPO_ROOT): { from: string; alias: string | null; lines: string[] }[] {
  const text = readFileSync(join(root, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const stages: { from: string; alias: string | null; lines: string[] }[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?$/i.exec(line);
    if (from) stages.push({ from: from[1]!, alias: from[2] ?? null, lines: [] });
    else stages.at(-1)?.lines.push(line);
  }
  return stages;
}

// ---------------------------------------------------------------------------------------------- Kubernetes

export const K8S_DIR = join(REPO_ROOT, 'deploy/k8s');

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; [key: string]: unknown };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  [key: string]: unknown;
}

/** Every object of every YAML file in deploy/k8s/ but the kustomization, with the file it is in. */
export function readManifests(dir = K8S_DIR): { file: string; object: K8sObject }[] {
  return readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml')
    .sort()
    .flatMap((file) =>
      parseAllDocuments(readFileSync(join(dir, file), 'utf8')).map((doc) => {
        if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
        return { file, object: doc.toJS() as K8sObject };
      }),
    );
}

export function readKustomization(dir = K8S_DIR): {
  resources: string[];
  namespace?: string;
  images?: { name: string; newName?: string; newTag?: string }[];
} {
  return parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as ReturnType<typeof readKustomization>;
}

import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT, Stack, adminSql, runCli, testEnv, waitFor, withDatabase } from '@dossier/testing';

/**
 * The docs' curl transcripts are scripts: in each document of DOCUMENTS, every ```console block with a
 * `$ curl` command is run, command by command, against a fresh service of the document's own, and each
 * answer is compared with the one the document shows — the status line, every header it shows (others
 * are ignored) and the whole JSON body.
 *
 * - A document addresses the service as `npm start` runs it by default (README_BASE_URL); a block
 *   whose preceding paragraph says "`VAR=value … npm start`" runs against a stack started with those
 *   variables. `$ NAME=value` lines set shell variables for the commands after them.
 * - Ids, keys and request ids (`acct_…`, `key_…`, `srch_…`, `dsk_…`, `req_…`, `bat_…`, `evt_…`, `wh_…`,
 *   `whsec_…`) are bound, not
 *   ignored: the first time a document shows one, it stands for the server's value at that place,
 *   and from then on the document must use it for that value only. A command that uses an id an
 *   earlier answer showed runs with the server's value. Timestamps match any timestamp, a person's `age`
 *   any age from the one shown on (it grows with the years), `took_ms`
 *   any duration.
 * - A GET that the server answers `pending` while the document shows the finished search is asked
 *   again, as a reader would, until it is done.
 */
/** README.md's first search, the walkthrough, and the operations pages' health check and webhooks. */
const DOCUMENTS = ['README.md', 'docs/walkthrough.md', 'docs/operations.md'];
const README_BASE_URL = 'http://127.0.0.1:3000';
const ID = /\b(?:(?:acct|key|srch|dsk|req|bat|evt|wh)_[0-9A-Za-z_]{4,}|whsec_[0-9A-Za-z_-]{4,})/;
const TIMESTAMP = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z/;
const ID_OR_TIMESTAMP = new RegExp(`(${ID.source})|(${TIMESTAMP.source})`, 'g');
const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=(\S+)$/;

interface Step {
  /** 1-based line of the `$` in its document. */
  line: number;
  command: string;
  expected: string;
  /** The stack's extra environment (from "`VAR=value npm start`" before the block). */
  env: Record<string, string>;
}

function walkthrough(markdown: string, file: string): Step[] {
  const lines = markdown.split('\n');
  const steps: Step[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== '```console') continue;
    let end = i + 1;
    while (end < lines.length && lines[end]!.trim() !== '```') end++;
    const block = lines.slice(i + 1, end);
    if (block.some((l) => l.startsWith('$ curl '))) steps.push(...blockSteps(block, i + 2, envBefore(lines, i), file));
    i = end;
  }
  return steps;
}

function blockSteps(block: string[], firstLine: number, env: Record<string, string>, file: string): Step[] {
  const steps: Step[] = [];
  let k = 0;
  while (k < block.length) {
    if (!block[k]!.startsWith('$ ')) {
      if (block[k]!.trim()) throw new Error(`${file}:${firstLine + k}: output that no \`$ curl\` command produced`);
      k++;
      continue;
    }
    const line = firstLine + k;
    let command = block[k]!.slice(2);
    while (command.endsWith('\\') && k + 1 < block.length) command += `\n${block[++k]}`;
    k++;
    const output: string[] = [];
    while (k < block.length && !block[k]!.startsWith('$ ')) output.push(block[k++]!);
    if (!command.startsWith('curl ') && !ASSIGNMENT.test(command)) {
      throw new Error(`${file}:${line}: a curl transcript can only hold \`$ curl …\` and \`$ NAME=value\` lines`);
    }
    steps.push({ line, command, expected: output.join('\n').trim(), env });
  }
  return steps;
}

/** "`SIGNUP_CREDITS=0 npm start`" in the paragraph just before a block: the stack it runs against. */
function envBefore(lines: string[], fence: number): Record<string, string> {
  let start = fence - 1;
  while (start >= 0 && !lines[start]!.trim()) start--;
  const paragraph: string[] = [];
  for (; start >= 0 && lines[start]!.trim(); start--) paragraph.unshift(lines[start]!);
  const match = /`((?:[A-Z][A-Z0-9_]*=[^\s`]+ )+)npm start`/.exec(paragraph.join(' '));
  if (!match) return {};
  return Object.fromEntries(
    match[1]!
      .trim()
      .split(/\s+/)
      .map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]),
  );
}

interface Answer {
  statusLine: string | null;
  headers: Map<string, string>;
  body: string;
}

function parseAnswer(text: string, separator: string): Answer {
  if (!/^HTTP\/\S+ \d{3}/.test(text)) return { statusLine: null, headers: new Map(), body: text.trim() };
  const cut = text.indexOf(separator + separator);
  const head = (cut < 0 ? text : text.slice(0, cut)).split(separator);
  const headers = new Map<string, string>();
  for (const line of head.slice(1)) {
    const colon = line.indexOf(':');
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { statusLine: head[0]!.trim(), headers, body: cut < 0 ? '' : text.slice(cut + 2 * separator.length).trim() };
}

/** A document's values and the server's, bound one to one across the whole document. */
class Bindings {
  private readonly real = new Map<string, string>();
  private readonly shown = new Map<string, string>();

  bind(readme: string, server: string): string | null {
    const known = this.real.get(readme);
    if (known !== undefined && known !== server) return `${readme} stood for ${known} before, here for ${server}`;
    const other = this.shown.get(server);
    if (other !== undefined && other !== readme) return `the server's ${server} was shown as ${other} before`;
    this.real.set(readme, server);
    this.shown.set(server, readme);
    return null;
  }

  /** The command with every id of the document that an answer showed replaced by the server's value. */
  substitute(command: string): string {
    return command.replace(new RegExp(ID.source, 'g'), (id) => this.real.get(id) ?? id);
  }
}

/** Differences between what the document shows and what the server sent, as readable lines. */
class Comparison {
  readonly differences: string[] = [];
  constructor(private readonly bindings: Bindings) {}

  text(where: string, readme: string, server: string): void {
    const pattern: string[] = [];
    const ids: string[] = [];
    let last = 0;
    for (const m of readme.matchAll(ID_OR_TIMESTAMP)) {
      pattern.push(escape(readme.slice(last, m.index)));
      if (m[1]) {
        ids.push(m[1]);
        // a webhook secret is base64url (with `-`); every other id is base62 with `_`
        pattern.push(
          `(${escape(m[1].slice(0, m[1].indexOf('_') + 1))}[0-9A-Za-z_${m[1].startsWith('whsec_') ? '-' : ''}]+)`,
        );
      } else {
        pattern.push(TIMESTAMP.source);
      }
      last = m.index + m[0].length;
    }
    pattern.push(escape(readme.slice(last)));
    const match = new RegExp(`^${pattern.join('')}$`).exec(server);
    if (!match) {
      this.differences.push(`${where}: shown ${JSON.stringify(readme)}, server ${JSON.stringify(server)}`);
      return;
    }
    ids.forEach((id, n) => {
      const conflict = this.bindings.bind(id, match[n + 1]!);
      if (conflict) this.differences.push(`${where}: ${conflict}`);
    });
  }

  json(where: string, readme: unknown, server: unknown): void {
    if (typeof readme === 'string' && typeof server === 'string') return this.text(where, readme, server);
    if (where.endsWith('.took_ms') && typeof readme === 'number') {
      if (!Number.isInteger(server) || (server as number) < 0) this.differences.push(`${where}: server ${server}`);
      return;
    }
    // A person's age is this year's: the document shows the year it was written in.
    if (where.endsWith('.age') && typeof readme === 'number') {
      if (!Number.isInteger(server) || (server as number) < readme) this.differences.push(`${where}: server ${server}`);
      return;
    }
    if (Array.isArray(readme) && Array.isArray(server)) {
      if (readme.length !== server.length) {
        this.differences.push(`${where}: shown ${readme.length} items, the server sent ${server.length}`);
      }
      readme.slice(0, server.length).forEach((r, i) => this.json(`${where}[${i}]`, r, server[i]));
      return;
    }
    if (isObject(readme) && isObject(server)) {
      const missing = Object.keys(server).filter((k) => !(k in readme));
      const extra = Object.keys(readme).filter((k) => !(k in server));
      if (missing.length) this.differences.push(`${where}: the document leaves out ${missing.join(', ')}`);
      if (extra.length) this.differences.push(`${where}: the server sent no ${extra.join(', ')}`);
      for (const k of Object.keys(readme)) if (k in server) this.json(`${where}.${k}`, readme[k], server[k]);
      return;
    }
    if (readme !== server) {
      this.differences.push(`${where}: shown ${JSON.stringify(readme)}, server ${JSON.stringify(server)}`);
    }
  }

  answer(readme: Answer, server: Answer): void {
    if (readme.statusLine !== server.statusLine) {
      this.differences.push(
        `status line: shown ${readme.statusLine ?? '(none)'}, server ${server.statusLine ?? '(none)'}`,
      );
    }
    for (const [name, value] of readme.headers) {
      const sent = server.headers.get(name);
      if (sent === undefined) this.differences.push(`header ${name}: the server sent none`);
      else this.text(`header ${name}`, value, sent);
    }
    const shown = tryJson(readme.body);
    const sent = tryJson(server.body);
    if (shown.ok && sent.ok) this.json('body', shown.value, sent.value);
    else this.text('body', readme.body, server.body);
  }
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function tryJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

const run = promisify(execFile);

/** The docs that hold curl transcripts: README.md and docs/*.md with a ```console block of `$ curl`. */
function documentsWithTranscripts(): string[] {
  const docs = [
    'README.md',
    ...readdirSync(join(REPO_ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  return docs.filter((file) => walkthrough(readFileSync(join(REPO_ROOT, file), 'utf8'), file).length > 0);
}

it('runs every document that shows a curl transcript', () => {
  expect(documentsWithTranscripts().sort()).toEqual([...DOCUMENTS].sort());
});

/** Migrated and seeded once, as `npm start` does; each document's database is a copy of it. */
const template = `${new URL(testEnv.databaseUrl).pathname.slice(1)}_doc_template`;

beforeAll(async () => {
  const templateUrl = withDatabase(testEnv.baseDatabaseUrl, template);
  await adminSql(`CREATE DATABASE "${template}"`);
  const migrated = await runCli(['db:migrate'], { DATABASE_URL: templateUrl });
  if (migrated.code !== 0) throw new Error(`db:migrate failed: ${migrated.stderr}`);
  // The demo set the person and company searches answer from.
  const seeded = await runCli(['demo:seed', '--if-absent'], { DATABASE_URL: templateUrl });
  if (seeded.code !== 0) throw new Error(`demo:seed failed: ${seeded.stderr}`);
}, 180_000);
afterAll(async () => {
  await adminSql(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`);
});

describe.each(DOCUMENTS)('%s curl transcripts (run against gateway + worker processes)', (file) => {
  const steps = walkthrough(readFileSync(join(REPO_ROOT, file), 'utf8'), file);
  const name = file.replace(/^.*\/|\.md$/g, '').toLowerCase();
  const database = `${new URL(testEnv.databaseUrl).pathname.slice(1)}_doc_${name}`;
  const databaseUrl = withDatabase(testEnv.baseDatabaseUrl, database);
  const stacks = new Map<string, Promise<Stack>>();
  const bindings = new Bindings();
  const variables: Record<string, string> = {};

  /** One stack per distinct environment, on a database of the document's own (its e-mails are fixed). */
  const stackFor = (env: Record<string, string>): Promise<Stack> => {
    const key = JSON.stringify(env);
    if (!stacks.has(key)) stacks.set(key, Stack.start({ label: 'readme', env: { DATABASE_URL: databaseUrl, ...env } }));
    return stacks.get(key)!;
  };

  beforeAll(async () => {
    await adminSql(`CREATE DATABASE "${database}" TEMPLATE "${template}"`);
  });
  afterAll(async () => {
    const started = await Promise.allSettled(stacks.values());
    await Promise.all(started.map((s) => (s.status === 'fulfilled' ? s.value.stop() : undefined)));
    await adminSql(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  });

  it('addresses the service where npm start serves it', () => {
    expect(steps.filter((s) => s.command.startsWith('curl ')).length).toBeGreaterThan(0);
    const elsewhere = steps.flatMap((s) =>
      // a URL inside a JSON body (-d '…') is data, such as a webhook's address, not where the request goes
      [...s.command.replace(/-d '[^']*'/g, '').matchAll(/https?:\/\/[^\s'"]+/g)]
        .map((m) => m[0])
        .filter((url) => !url.startsWith(`${README_BASE_URL}/`))
        .map((url) => `${file}:${s.line}: ${url}`),
    );
    expect(elsewhere).toEqual([]);
  });

  for (const step of steps) {
    const title = step.command.split('\n')[0]!.replace(/\s*\\$/, '');
    it(`${file}:${step.line} $ ${title}`, async () => {
      const command = bindings.substitute(step.command);
      const assignment = ASSIGNMENT.exec(command);
      if (assignment) {
        expect(step.expected).toBe('');
        variables[assignment[1]!] = assignment[2]!;
        return;
      }
      const stack = await stackFor(step.env);
      const shell = command.replaceAll(README_BASE_URL, stack.baseUrl);
      const ask = async () =>
        (await run('bash', ['-c', shell], { env: { PATH: process.env['PATH'] ?? '', ...variables }, timeout: 30_000 }))
          .stdout;
      const shown = parseAnswer(step.expected, '\n');
      let output = await ask();
      const pendingGet = (text: string) =>
        !/-X\s*(POST|DELETE|PUT|PATCH)|\s-d\s/.test(command) &&
        /"status":"pending"/.test(text) &&
        !/"status":"pending"/.test(step.expected);
      if (pendingGet(output)) {
        output = await waitFor(ask, (text) => !pendingGet(text), { timeoutMs: 10_000, what: 'the search to finish' });
      }
      const comparison = new Comparison(bindings);
      comparison.answer(shown, parseAnswer(output, '\r\n'));
      if (comparison.differences.length) {
        throw new Error(
          [
            `${file}:${step.line} and the server disagree:`,
            ...comparison.differences.map((d) => `  - ${d}`),
            `--- ${file}:${step.line} shows ---`,
            `$ ${step.command}`,
            step.expected,
            '--- the server answered ---',
            output.replaceAll('\r\n', '\n'),
          ].join('\n'),
        );
      }
    });
  }
});

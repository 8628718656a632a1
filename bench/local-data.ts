/**
 * `--data [N]`: the local index at scale. N demo people (default 1,000,000) are written to a JSONL file
 * and loaded through the real import path (`cli import person FILE`, a process of its own), then again by
 * plain COPY (the import's floor, `import_ratio`), then a tenth as many into the populated index (`populated_ratio`:
 * its rate over the first import's); the indexes' sizes are read from Postgres, and person searches by name go
 * through the real gateway and worker at that size, then again with only the first tenth of the people stored
 * (`search_scale_ratio`: the p95s' ratio, ADR 0078). Only with --data: loading a million records takes minutes.
 */
import { execFileSync } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { runCli } from '@dossier/testing';
import { WRITERS } from '../apps/cli/src/import/batches';
import { demoPeople } from '../apps/cli/src/import/demo';
import { registerAccounts, startGateway, startProfiles, startWorker, stopApp, stopProfiles } from './apps';
import type { BenchContext } from './context';
import { procRss } from './cpu';
import { failureCount, percentile, rate, tooManyFailures } from './drive';
import { poster, postOp } from './load';
import { measureWindow, type Phase, type PhaseReport } from './phase';

/** Searches in flight: a handful of callers, as latency (not throughput) is what this phase reads. */
const INFLIGHT = 4;
/** Distinct searched names, half of them with a typo (see writeDemoFile). */
const QUERIES = 2_000;

export function localData(): Phase {
  return {
    key: 'data',
    enabled: (opts) => opts.dataPeople > 0,
    run,
  };
}

async function run(ctx: BenchContext): Promise<PhaseReport> {
  const count = ctx.opts.dataPeople;
  const dir = mkdtempSync(join(tmpdir(), 'dossier-bench-data-'));
  const file = join(dir, 'people.jsonl');
  const lines: string[] = [];
  // A tenth: the people imported again into the populated index, and the scale reference's (the first tenth of the
  // file; the names searched are theirs, so both windows search the same).
  const tenth = Math.max(100, Math.round(count / 10));
  try {
    const queries = await writeDemoFile(file, count, 'bench', tenth);
    const imported = await importTimed(ctx, file, count, 'into an empty index');
    lines.push(imported.line, await copyFloor(ctx, dir, count, imported.rate));
    // Then a tenth as many again, under another source (new records, the same names: namesakes), into
    // the index the first import filled.
    const moreFile = join(dir, 'more.jsonl');
    await writeDemoFile(moreFile, tenth, 'bench-more', tenth);
    const populated = await importTimed(ctx, moreFile, tenth, `into the populated index (${count} people)`);
    // ADR 0077: the issue's 10,000 and 20,000 records/s, as a share that holds on any machine.
    lines.push(
      `${populated.line}; populated_ratio=${(populated.rate / imported.rate).toFixed(2)} of the empty import's`,
    );
    lines.push(...(await settled(ctx, true)));
    const full = await searchWindow(ctx, queries, count + tenth, true);
    lines.push(...full.lines);
    // The scale reference (ADR 0078): the same names searched again with only the first tenth of the people stored.
    const head = join(dir, 'reference.jsonl');
    await copyHead(file, head, tenth);
    await withDb(ctx, (db) => db.query('TRUNCATE people, person_names, person_words'));
    await importPeople(ctx, head);
    await settled(ctx, false);
    const small = await searchWindow(ctx, queries, tenth, false);
    lines.push(
      ...small.lines,
      `search_scale_ratio=${(full.p95 / small.p95).toFixed(2)}: p95 at ${count + tenth} people ÷ p95 at ${tenth}, the same names (target ≤ 2, ADR 0078)`,
    );
    return {
      lines,
      rate: full.rate,
      rss: full.rss,
      failed: full.failed || small.failed,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function withDb<T>(ctx: BenchContext, work: (db: Client) => Promise<T>): Promise<T> {
  const db = new Client({ connectionString: ctx.dbUrl });
  await db.connect();
  try {
    return await work(db);
  } finally {
    await db.end();
  }
}

/** The imports' statistics and dirty pages settled before a search window; `report`: the tables' sizes too. */
async function settled(ctx: BenchContext, report: boolean): Promise<string[]> {
  return withDb(ctx, async (db) => {
    await db.query('VACUUM ANALYZE people');
    await db.query('VACUUM ANALYZE person_names');
    await db.query('VACUUM ANALYZE person_words');
    // The imports' dirty pages written now, not by the checkpointer during the search window; then the
    // kernel's own writeback of them (its flusher threads' CPU is nobody's in the window's accounting).
    await db.query('CHECKPOINT');
    execFileSync('sync');
    return report ? sizes(db) : [];
  });
}

/** The first `count` lines of `from` into `to`. */
async function copyHead(from: string, to: string, count: number): Promise<void> {
  const out = createWriteStream(to);
  const input = createReadStream(from);
  let left = count;
  try {
    for await (const line of createInterface({ input, crlfDelay: Infinity })) {
      if (left-- === 0) break;
      if (!out.write(`${line}\n`)) await once(out, 'drain');
    }
  } finally {
    input.destroy();
  }
  out.end();
  await once(out, 'finish');
}

/** Person searches by `queries` through a fresh gateway and worker, INFLIGHT at once: its lines and p95. */
async function searchWindow(
  ctx: BenchContext,
  queries: string[],
  people: number,
  profiled: boolean,
): Promise<{ lines: string[]; rate: number; p95: number; rss: PhaseReport['rss']; failed: boolean }> {
  const worker = await startWorker(ctx, { LOOKUP_QUEUES: 'person' });
  const gateway = await startGateway(ctx);
  const load = poster(ctx.opts.client, gateway.baseUrl, '/v1/search/person', INFLIGHT);
  try {
    const bodies = queries.map((name) => Buffer.from(JSON.stringify({ name })));
    const op = postOp(load, bodies, await registerAccounts(gateway, 1));
    const { result, lines: window } = await measureWindow(
      ctx,
      {
        warmupMs: ctx.opts.warmupMs,
        inflight: INFLIGHT,
        procs: { gateway: gateway.app.pid, worker: worker.app.pid },
        selfLabel: `load generator (${ctx.opts.client})`,
        ...(profiled
          ? { atStart: () => startProfiles(ctx, [gateway, worker]), atEnd: () => stopProfiles(ctx, [gateway, worker]) }
          : {}),
      },
      op,
    );
    const p = (n: number) => percentile(result.latencies, n).toFixed(1);
    return {
      lines: [
        `person search by name through the gateway at ${people} people (${INFLIGHT} in flight, ${queries.length} names, half with a typo): ` +
          `${rate(result).toFixed(0)} req/s  p50 ${p(50)} ms  p95 ${p(95)} ms  p99 ${p(99)} ms  errors/non-200 ${failureCount(result)}`,
        ...window,
      ],
      rate: rate(result),
      p95: percentile(result.latencies, 95),
      rss: [
        { label: 'search gateway', rss: procRss(gateway.app.pid) },
        { label: 'search worker', rss: procRss(worker.app.pid) },
      ],
      failed: tooManyFailures(result),
    };
  } finally {
    load.close();
    await stopApp(ctx, gateway);
    await stopApp(ctx, worker);
  }
}

/** `cli import person FILE` (a process of its own) into the bench database, timed: the report line, records/s. */
async function importTimed(
  ctx: BenchContext,
  file: string,
  count: number,
  into: string,
): Promise<{ line: string; rate: number }> {
  const started = performance.now();
  const summary = await importPeople(ctx, file);
  const seconds = (performance.now() - started) / 1000;
  const rate = count / seconds;
  return {
    line: `local index: imported ${count} demo people ${into} through \`cli import person\` in ${seconds.toFixed(1)} s: ${Math.round(rate)} records/s (${summary})`,
    rate,
  };
}

/** `cli import person FILE` into the bench database; what it printed. Throws when it fails. */
async function importPeople(ctx: BenchContext, file: string): Promise<string> {
  const imported = await runCli(['import', 'person', file], { DATABASE_URL: ctx.dbUrl }, ctx.signal);
  if (imported.code !== 0)
    throw new Error(`cli import exited with ${String(imported.code)}: ${imported.stderr.slice(-2000)}`);
  return imported.stdout.trim();
}

/** The tables an import of people fills, in the order they are loaded (person_words once, after). */
const PERSON_TABLES = ['people', 'person_names'] as const;

/**
 * The import's floor (ADR 0074): the rows the import just stored, loaded again into the same empty tables with
 * the same indexes by Postgres alone — plain COPY, WRITERS connections at once as the import has, each a share
 * of the people and of their names, then the words — timed against `cli import person`'s whole run (its
 * reading, checking, normalising, staging and upserts included). `import_ratio` is the import's rate over this
 * one's: it holds on any machine, where a records/s target moves with the machine. The tables hold the same
 * rows afterwards.
 */
async function copyFloor(ctx: BenchContext, dir: string, count: number, importRate: number): Promise<string> {
  const part = (table: string, k: number) => join(dir, `${table}.${k}.copy`);
  const lanes = Array.from({ length: WRITERS }, (_, k) => k);
  const db = new Client({ connectionString: ctx.dbUrl });
  await db.connect();
  const clients = await Promise.all(
    lanes.map(async () => {
      const c = new Client({ connectionString: ctx.dbUrl });
      await c.connect();
      return c;
    }),
  );
  try {
    for (const k of lanes)
      for (const table of PERSON_TABLES) {
        const id = table === 'people' ? 'id' : 'person_id';
        const rows = `SELECT * FROM ${table} WHERE (hashtext(${id}) & 2147483647) % ${WRITERS} = ${k}`;
        await pipeline(db.query(copyTo(`COPY (${rows}) TO STDOUT`)), createWriteStream(part(table, k)));
      }
    await pipeline(db.query(copyTo('COPY person_words TO STDOUT')), createWriteStream(part('person_words', 0)));
    await db.query('TRUNCATE people, person_names, person_words');
    await db.query('CHECKPOINT');
    const started = performance.now();
    await Promise.all(
      lanes.map(async (k) => {
        for (const table of PERSON_TABLES)
          await pipeline(createReadStream(part(table, k)), clients[k]!.query(copyFrom(`COPY ${table} FROM STDIN`)));
      }),
    );
    await pipeline(createReadStream(part('person_words', 0)), db.query(copyFrom('COPY person_words FROM STDIN')));
    const seconds = (performance.now() - started) / 1000;
    const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM people');
    if (rows[0]!.n !== count) throw new Error(`the COPY floor loaded ${rows[0]!.n} people, not ${count}`);
    const floor = count / seconds;
    return `local index floor: the same ${count} people loaded again into the emptied tables by plain COPY on ${WRITERS} connections in ${seconds.toFixed(1)} s: ${Math.round(floor)} records/s; import_ratio=${(importRate / floor).toFixed(2)}`;
  } finally {
    await Promise.all([db, ...clients].map((c) => c.end()));
  }
}

/**
 * Writes `count` demo people as JSONL under `source`; returns the names to search: QUERIES of the first `from`
 * people's, evenly spaced (the scale reference stores only those), every other one with a typo.
 */
async function writeDemoFile(file: string, count: number, source: string, from: number): Promise<string[]> {
  const out = createWriteStream(file);
  const queries: string[] = [];
  const every = Math.max(1, Math.floor(from / QUERIES));
  let chunk = '';
  let i = 0;
  for (const person of demoPeople(count)) {
    chunk += `${JSON.stringify({ ...person, source })}\n`;
    if (i < from && i % every === 0 && queries.length < QUERIES)
      queries.push(queries.length % 2 ? typo(person.full_name) : person.full_name);
    if (++i % 2_000 === 0) {
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  out.end(chunk);
  await once(out, 'finish');
  return queries;
}

/** The last name with two letters in its middle swapped: "Halvorson" → "Halvroson". */
function typo(name: string): string {
  const words = name.split(' ');
  const last = words[words.length - 1]!;
  if (last.length < 5) return name;
  const at = Math.floor(last.length / 2);
  words[words.length - 1] = last.slice(0, at) + last[at + 1] + last[at] + last.slice(at + 2);
  return words.join(' ');
}

async function sizes(db: Client): Promise<string[]> {
  const { rows } = await db.query<{ relname: string; kind: string; mib: string }>(
    `SELECT c.relname, CASE c.relkind WHEN 'i' THEN 'index' ELSE 'table' END AS kind,
            round(pg_relation_size(c.oid) / 1048576.0, 1)::text AS mib
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i')
        AND (c.relname LIKE 'people%' OR c.relname LIKE 'person_names%')
      ORDER BY pg_relation_size(c.oid) DESC`,
  );
  const total = rows.reduce((s, r) => s + Number(r.mib), 0);
  const indexes = rows.filter((r) => r.kind === 'index').reduce((s, r) => s + Number(r.mib), 0);
  return [
    `local index size: ${total.toFixed(0)} MiB (indexes ${indexes.toFixed(0)} MiB): ${rows.map((r) => `${r.relname} ${r.mib}`).join(', ')}`,
  ];
}

import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Api,
  LoopbackSites,
  REPO_ROOT,
  SHIPPED_SITES_FILE,
  Stack,
  ownDatabase,
  runCli,
  runCommand,
  sql,
  switchDatabase,
} from '@dossier/testing';

/**
 * The four client READMEs' examples, run as they are written against a gateway and worker serving the demo
 * set, as `npm start` serves it. Every block fenced ```python, ```js, ```ruby or ```php is a program: it runs
 * on its own (a file in a folder where the client is installed as its README says), with DOSSIER_BASE_URL
 * naming the service and DOSSIER_API_KEY a fresh account's key, and must exit 0 having run at least one
 * lookup, every one of which found something. A block fenced "```<language> fragment" (a webhook receiver
 * inside a web framework, an install line) is part of a larger program: it is only checked to parse. Username
 * presence checks a few sites of the shipped list copied to loopback (as `npm start` checks the whole list on the
 * network), so that a username example choosing sites (`top`) has sites to choose from.
 */
interface Language {
  /** The fence's info string. */
  fence: string;
  readme: string;
  file: string;
  /** Runs `file` in the language's folder. */
  run: (file: string) => string[];
  /** Checks that `file` parses, running nothing. */
  parse: (file: string) => string[];
  /** Installs the client into `dir` as its README's Install section says, for `run` to find it. */
  install: (dir: string) => Promise<Record<string, string>>;
}

const LANGUAGES: Language[] = [
  {
    fence: 'python',
    readme: 'clients/python/README.md',
    file: 'example.py',
    run: (file) => ['python3', file],
    parse: (file) => ['python3', '-c', 'import ast, sys; ast.parse(open(sys.argv[1]).read())', file],
    // "use it without installing by putting the folder on the path"
    install: () => Promise.resolve({ PYTHONPATH: join(REPO_ROOT, 'clients/python') }),
  },
  {
    fence: 'js',
    readme: 'clients/javascript/README.md',
    file: 'example.mjs',
    run: (file) => ['node', file],
    parse: (file) => ['node', '--check', file],
    // What `npm install <the packed tarball>` leaves: the package's package.json and its compiled dist.
    install: async (dir) => {
      const pkg = join(dir, 'node_modules/@dossier/client');
      mkdirSync(pkg, { recursive: true });
      copyFileSync(join(REPO_ROOT, 'clients/javascript/package.json'), join(pkg, 'package.json'));
      const tsc = join(REPO_ROOT, 'node_modules/.bin/tsc');
      const built = await exec([tsc, '-p', 'clients/javascript/tsconfig.json', '--outDir', join(pkg, 'dist')], {
        cwd: REPO_ROOT,
      });
      if (built.code !== 0) throw new Error(`building the JavaScript client failed:\n${built.output}`);
      return {};
    },
  },
  {
    fence: 'ruby',
    readme: 'clients/ruby/README.md',
    file: 'example.rb',
    // "without installing anything: ruby -I path/to/clients/ruby/lib your_script.rb"
    run: (file) => ['ruby', '-I', join(REPO_ROOT, 'clients/ruby/lib'), file],
    parse: (file) => ['ruby', '-c', file],
    install: () => Promise.resolve({}),
  },
  {
    fence: 'php',
    readme: 'clients/php/README.md',
    file: 'example.php',
    run: (file) => ['php', file],
    parse: (file) => ['php', '-l', file],
    // What Composer's path repository leaves: vendor/autoload.php loading the package's classes.
    install: (dir) => {
      mkdirSync(join(dir, 'vendor'));
      const autoload = JSON.stringify(join(REPO_ROOT, 'clients/php/autoload.php'));
      writeFileSync(join(dir, 'vendor/autoload.php'), `<?php\nrequire ${autoload};\n`);
      return Promise.resolve({});
    },
  },
];

interface Block {
  /** 1-based line of the opening fence. */
  line: number;
  fragment: boolean;
  code: string;
}

/** The README's blocks fenced in `fence` (with `fragment` after it, or nothing). */
function blocksOf(markdown: string, fence: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S+)(?:\s+(.*))?$/.exec(lines[i]!);
    if (!open) continue;
    let end = i + 1;
    while (end < lines.length && lines[end] !== '```') end++;
    if (open[1] === fence) {
      const words = (open[2] ?? '').split(/\s+/).filter(Boolean);
      if (words.some((w) => w !== 'fragment')) throw new Error(`line ${i + 1}: unknown fence words ${open[2]!}`);
      blocks.push({ line: i + 1, fragment: words.includes('fragment'), code: lines.slice(i + 1, end).join('\n') });
    }
    i = end;
  }
  return blocks;
}

/** `command` in `cwd` with only PATH, HOME and `env` in its environment: what an example meets on a clean shell. */
function exec(
  command: string[],
  options: { cwd: string; env?: Record<string, string>; timeoutMs?: number },
): Promise<{ code: number | null; output: string }> {
  return runCommand(command, {
    cwd: options.cwd,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...options.env },
    timeoutMs: options.timeoutMs ?? 60_000,
  });
}

describe('client READMEs: every example runs as written against the demo set and finds something', () => {
  let stack: Stack;
  let api: Api;
  let sites: LoopbackSites | undefined;
  let dropDatabase: () => Promise<void>;
  let restoreDatabase: () => void;
  const dir = mkdtempSync(join(tmpdir(), 'dossier-client-readmes-'));

  beforeAll(async () => {
    const database = await ownDatabase('client_readmes');
    dropDatabase = database.drop;
    restoreDatabase = switchDatabase(database.url);
    // As `npm start` does: the demo set the examples search.
    const seeded = await runCli(['demo:seed', '--if-absent'], { DATABASE_URL: database.url });
    if (seeded.code !== 0) throw new Error(`demo:seed failed: ${seeded.stderr}`);
    // The first 30 sites of the shipped list, each on loopback, about half showing a profile of gonzalo_halvorson.
    const shipped = JSON.parse(readFileSync(SHIPPED_SITES_FILE, 'utf8')) as Record<string, unknown>;
    const subset = Object.fromEntries(
      Object.entries(shipped)
        .filter(([name]) => !name.startsWith('$'))
        .slice(0, 30),
    );
    writeFileSync(join(dir, 'shipped-subset.json'), JSON.stringify(subset));
    sites = await LoopbackSites.start({
      handle: 'gonzalo_halvorson',
      seed: 40,
      latencyMs: [10, 50],
      hangShare: 0,
      foundShare: 0.5,
      file: join(dir, 'shipped-subset.json'),
    });
    writeFileSync(join(dir, 'sites.json'), JSON.stringify(sites.list));
    stack = await Stack.start({ label: 'client-readmes', workerEnv: { USERNAME_SITES_FILE: join(dir, 'sites.json') } });
    api = new Api(stack.baseUrl);
  }, 180_000);
  afterAll(async () => {
    await stack?.stop();
    await sites?.close();
    restoreDatabase?.();
    await dropDatabase?.();
    rmSync(dir, { recursive: true, force: true });
  });

  describe.each(LANGUAGES)('$readme', (language) => {
    const blocks = blocksOf(readFileSync(join(REPO_ROOT, language.readme), 'utf8'), language.fence);
    const folder = join(dir, language.fence);
    let installed: Promise<Record<string, string>>;

    beforeAll(() => {
      mkdirSync(folder);
      installed = language.install(folder);
    });

    it('has its quickstart and examples as programs', () => {
      expect(blocks.filter((b) => !b.fragment).length).toBeGreaterThanOrEqual(8);
    });

    it.each(blocks)(
      `${language.readme}:$line`,
      async (block) => {
        const env = await installed;
        writeFileSync(join(folder, language.file), `${block.code}\n`);
        if (block.fragment) {
          const parsed = await exec(language.parse(language.file), { cwd: folder, env });
          if (parsed.code !== 0) throw new Error(`does not parse: exit ${parsed.code}\n${parsed.output}`);
          return;
        }
        const { key } = await api.register();
        const since = (await sql<{ since: Date }>('SELECT now() AS since'))[0]!.since;
        const ran = await exec(language.run(language.file), {
          cwd: folder,
          env: { ...env, DOSSIER_BASE_URL: stack.baseUrl, DOSSIER_API_KEY: key },
          timeoutMs: 90_000,
        });
        if (ran.code !== 0) throw new Error(`exit ${ran.code}\n${ran.output}\n${stack.logs.slice(-3000)}`);
        // Every lookup the example ran (this database serves nothing else), with what it found.
        const searches = await sql<{ id: string; kind: string; status: string; result_count: number | null }>(
          'SELECT id, kind, status, result_count FROM searches WHERE created_at >= $1 ORDER BY created_at',
          [since],
        );
        expect(searches.length).toBeGreaterThan(0);
        expect(searches.filter((s) => s.status !== 'succeeded' || !s.result_count)).toEqual([]);
      },
      120_000,
    );
  });
});

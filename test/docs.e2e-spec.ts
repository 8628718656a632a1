import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { REPO_ROOT } from '@dossier/testing';

/**
 * The docs point at what is there: README.md stays a front door, every relative link and anchor in the
 * repository's Markdown resolves, and every repository path README.md and docs/*.md name exists — in a code
 * span (alone or as a word of a command), a link, a code block's line or a file tree. docs/adr/*.md are
 * history, and are held to their links only. No service is started; this reads files only.
 */

/** Folders of the repository a path in the docs may start with. */
const REPO_DIRS = /^(apps|libs|test|docs|scripts|clients|bench|deploy|schema|\.ci)\//;
/** Top-level files the docs name (STYLE.md, API.md and DESIGN.md live beside the repository, not in it). */
const TOP_LEVEL =
  /^(package(-lock)?\.json|tsconfig(\.\w+)?\.json|nest-cli\.json|jest\.config\.\w+|eslint\.config\.\w+|Dockerfile|docker-compose\.ya?ml|\.dockerignore|\.gitignore|\.dependency-cruiser\.cjs|\.prettier(rc(\.\w+)?|ignore)|README\.md)$/;
/** A placeholder, a glob or a shell word: not one path (`libs/providers/src/<id>/`, `test/*.e2e-spec.ts`). */
const NOT_ONE_PATH = /[\s<>*{}…|$]|NNNN/;
const SKIPPED_DIRS = new Set(['node_modules', '.git', 'dist', 'coverage', 'artifacts', 'vendor']);

interface Line {
  file: string;
  /** 1-based. */
  line: number;
  text: string;
  /** Inside a fenced code block, its fence lines included. */
  fenced: boolean;
}

function markdownFiles(dir = REPO_ROOT): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return SKIPPED_DIRS.has(entry.name) ? [] : markdownFiles(path);
    return entry.name.endsWith('.md') ? [relative(REPO_ROOT, path)] : [];
  });
}

function linesOf(file: string, content = readFileSync(join(REPO_ROOT, file), 'utf8')): Line[] {
  let fenced = false;
  return content.split('\n').map((text, i) => {
    const fence = /^\s*(```|~~~)/.test(text);
    if (fence) fenced = !fenced;
    return { file, line: i + 1, text, fenced: fenced || fence };
  });
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens; repeats get -1, -2, … */
function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const { text, fenced } of linesOf(file)) {
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!heading) continue;
    const slug = heading[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/`/g, '')
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n ? `${slug}-${n}` : slug);
  }
  return anchors;
}

/** Inline links `[text](target)` and reference definitions `[label]: target`, outside code. */
function linksOf(lines: Line[]): { line: number; target: string }[] {
  return lines
    .filter((l) => !l.fenced)
    .flatMap(({ line, text }) => {
      const prose = text.replace(/`[^`]*`/g, '');
      const inline = [...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
      const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(prose)?.[1];
      return [...inline, ...(definition ? [definition] : [])].map((target) => ({ line, target }));
    });
}

/**
 * Paths in a file tree drawn in a code block whose first line is a repository folder
 * (`libs/providers/src/` and the entries indented under it): the first word of each line, when it is a
 * file or folder name, under the nearest line above it that is indented less.
 */
function treePaths(lines: { line: number; text: string }[]): { line: number; path: string }[] {
  const found: { line: number; path: string }[] = [];
  let inBlock = false;
  /** The folders above the current line; null outside a tree. */
  let stack: { indent: number; path: string }[] | null = null;
  for (const { line, text } of lines) {
    if (/^\s*(```|~~~)/.test(text)) {
      inBlock = !inBlock;
      stack = inBlock && /^\s*(```|~~~)\s*(text)?\s*$/.test(text) ? [] : null;
      continue;
    }
    if (!inBlock || stack === null || !text.trim()) continue;
    const indent = text.length - text.trimStart().length;
    const word = text.trim().split(/\s+/)[0]!;
    if (stack.length === 0 && !(indent === 0 && REPO_DIRS.test(word) && word.endsWith('/'))) {
      stack = null; // a diagram or a listing, not a tree
      continue;
    }
    if (!/^[\w.-]+(\/[\w.-]+)*\/?$/.test(word) || !/(\/|\.\w+)$/.test(word)) continue;
    while (stack.length && stack.at(-1)!.indent >= indent) stack.pop();
    const path = `${stack.at(-1)?.path ?? ''}${word}`;
    found.push({ line, path });
    if (word.endsWith('/')) stack.push({ indent, path });
  }
  return found;
}

function where(file: string, line: number): string {
  return `${file}:${line}`;
}

/** Whether a word reads as one path of the repository (not a placeholder, a glob or a shell word). */
function isRepoPath(path: string): boolean {
  return (REPO_DIRS.test(path) || TOP_LEVEL.test(path)) && !NOT_ONE_PATH.test(path);
}

/**
 * The words of a code span or a code line that may be paths, as they would be looked up: `./` and a
 * trailing `:42`, `#anchor` or punctuation taken off (`npm run jest -- test/docs.e2e-spec.ts` names
 * `test/docs.e2e-spec.ts`; `see apps/x.ts:12,` names `apps/x.ts`).
 */
function wordsOf(text: string): string[] {
  return text.split(/[\s=,;()'"[\]`]+/).map((word) =>
    word
      .replace(/^\.\//, '')
      .replace(/#.*$/, '')
      .replace(/(:\d+)+(-\d+)?$/, '')
      .replace(/[.:!?]+$/, ''),
  );
}

/** Every repository path a document names, with its line: code spans, links, code blocks and file trees. */
function pathsNamed(file: string, lines: Line[]): { line: number; path: string }[] {
  const named = [
    ...lines.flatMap(({ line, text, fenced }) =>
      (fenced ? (/^\s*(```|~~~)/.test(text) ? [] : [text]) : [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!))
        .flatMap(wordsOf)
        .map((path) => ({ line, path })),
    ),
    ...linksOf(lines)
      .filter(({ target }) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('#'))
      .map(({ line, target }) => ({
        line,
        path: relative(REPO_ROOT, join(REPO_ROOT, dirname(file), decodeURIComponent(target.split('#')[0]!))),
      })),
    ...treePaths(lines),
  ];
  const seen = new Set<string>();
  return named
    .filter(({ line, path }) => {
      const key = `${line} ${path}`;
      if (!isRepoPath(path) || seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .sort((a, b) => a.line - b.line);
}

/** `doc:line: path` for every repository path the document names that does not exist. */
function missingPaths(file: string, lines: Line[] = linesOf(file)): string[] {
  return pathsNamed(file, lines)
    .filter(({ path }) => !existsSync(join(REPO_ROOT, path)))
    .map(({ line, path }) => `${where(file, line)}: ${path}`);
}

describe('the docs', () => {
  const everyDoc = markdownFiles();
  const frontDocs = ['README.md', ...everyDoc.filter((f) => /^docs\/[^/]+\.md$/.test(f))];

  it('keep README.md a front door: at most 250 lines, none wider than 120 characters', () => {
    const lines = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8').replace(/\n$/, '').split('\n');
    expect(lines.length).toBeLessThanOrEqual(250);
    expect(lines.map((l, i) => [i + 1, [...l].length]).filter(([, width]) => width! > 120)).toEqual([]);
  });

  it('link to files and anchors that exist', () => {
    expect(everyDoc).toEqual(expect.arrayContaining(['README.md', 'docs/walkthrough.md', 'docs/configuration.md']));
    const broken = everyDoc.flatMap((file) =>
      linksOf(linesOf(file))
        .filter(({ target }) => !/^[a-z][a-z0-9+.-]*:/i.test(target)) // http:, https:, mailto:
        .flatMap(({ line, target }) => {
          const [path = '', anchor] = target.split('#');
          const resolved = path ? join(dirname(file), decodeURIComponent(path)) : file;
          if (!existsSync(join(REPO_ROOT, resolved))) return [`${where(file, line)}: ${target} (no such file)`];
          if (anchor === undefined) return [];
          if (!resolved.endsWith('.md') || statSync(join(REPO_ROOT, resolved)).isDirectory()) {
            return [`${where(file, line)}: ${target} (an anchor into something that is not a Markdown file)`];
          }
          return anchorsOf(resolved).has(anchor) ? [] : [`${where(file, line)}: ${target} (no such heading)`];
        }),
    );
    expect(broken).toEqual([]);
  });

  it('name repository paths that exist, in code, links and file trees of README.md and docs/*.md', () => {
    expect(frontDocs).toEqual(expect.arrayContaining(['README.md', 'docs/architecture.md', 'docs/benchmarks.md']));
    expect(frontDocs.some((f) => f.startsWith('docs/adr/'))).toBe(false);
    // A reader that found no path would pass whatever the docs say.
    expect(frontDocs.flatMap((file) => pathsNamed(file, linesOf(file))).length).toBeGreaterThan(100);
    expect(frontDocs.flatMap((file) => missingPaths(file))).toEqual([]);
  });

  it('fail on a path that does not exist, naming the document and the path (a check of the check)', () => {
    const doc = [
      'The worker runs `apps/worker/src/fan-out/fan-out.ts` and `apps/worker/src/fan-out/no-such-file.ts`.',
      'Run `node scripts/no-such-script.mjs --flag` or `npm run jest -- test/docs.e2e-spec.ts`, then',
      'read [the guide](no-such-guide.md) and [env](../libs/config/src/env.ts#L3), and `./Dockerfile:12`.',
      'Placeholders are no paths: `libs/providers/src/<id>/`, `test/*.e2e-spec.ts`, `docs/adr/NNNN-title.md`.',
      'Nor are words that only start like one: `docs:config`, `@dossier/config`, `dist/bench/main.js`.',
      '```sh',
      'cat libs/config/src/env.ts deploy/no-such-dir/values.yaml',
      '```',
      '```',
      'bench/',
      '  main.ts',
      '  no-such-phase.ts',
      '```',
    ];
    expect(missingPaths('docs/made-up.md', linesOf('docs/made-up.md', doc.join('\n')))).toEqual([
      'docs/made-up.md:1: apps/worker/src/fan-out/no-such-file.ts',
      'docs/made-up.md:2: scripts/no-such-script.mjs',
      'docs/made-up.md:3: docs/no-such-guide.md',
      'docs/made-up.md:7: deploy/no-such-dir/values.yaml',
      'docs/made-up.md:12: bench/no-such-phase.ts',
    ]);
  });

  it('read a file tree as the paths it draws, and a diagram as none (a check of the check)', () => {
    const lines = (texts: string[]) => texts.map((text, i) => ({ line: i + 1, text }));
    const tree = [
      '```',
      'libs/providers/src/',
      '  registry.ts     the list',
      '  gravatar/',
      '    fixtures/ok/a.json',
      '```',
    ];
    expect(treePaths(lines(tree)).map((p) => p.path)).toEqual([
      'libs/providers/src/',
      'libs/providers/src/registry.ts',
      'libs/providers/src/gravatar/',
      'libs/providers/src/gravatar/fixtures/ok/a.json',
    ]);
    expect(treePaths(lines(['```', '       client ---> gateway', '  registry.ts', '```']))).toEqual([]);
    expect(treePaths(lines(['```sh', 'apps/', '  x.ts', '```']))).toEqual([]);
  });
});

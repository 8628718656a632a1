import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { REPO_ROOT } from '@dossier/testing';

/**
 * The docs point at what is there: README.md stays a front door, every relative link and anchor in the
 * repository's Markdown resolves, and every repository path README.md and docs/*.md name exists. No
 * service is started; this reads files only.
 */

/** Folders of the repository a path in the docs may start with. */
const REPO_DIRS = /^(apps|libs|test|docs|scripts|clients|bench|deploy|schema|\.ci)\//;
/** Top-level files the docs name (STYLE.md, API.md and DESIGN.md live beside the repository, not in it). */
const TOP_LEVEL =
  /^(package(-lock)?\.json|tsconfig(\.\w+)?\.json|nest-cli\.json|jest\.config\.\w+|eslint\.config\.\w+|Dockerfile|docker-compose\.ya?ml|\.dockerignore|\.dependency-cruiser\.cjs|\.prettier(rc|ignore)|README\.md)$/;
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

function linesOf(file: string): Line[] {
  let fenced = false;
  return readFileSync(join(REPO_ROOT, file), 'utf8')
    .split('\n')
    .map((text, i) => {
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
function linksOf(file: string): { line: number; target: string }[] {
  return linesOf(file)
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
      linksOf(file)
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

  it('name repository paths that exist, in backticks, links and file trees of README.md and docs/*.md', () => {
    expect(frontDocs.length).toBeGreaterThan(5);
    const missing = frontDocs.flatMap((file) => {
      const lines = linesOf(file);
      const named = [
        ...lines
          .filter((l) => !l.fenced)
          .flatMap(({ line, text }) => [...text.matchAll(/`([^`]+)`/g)].map((m) => ({ line, path: m[1]!.trim() }))),
        ...linksOf(file)
          .filter(({ target }) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('#'))
          .map(({ line, target }) => ({
            line,
            path: relative(REPO_ROOT, join(REPO_ROOT, dirname(file), decodeURIComponent(target.split('#')[0]!))),
          })),
        ...treePaths(lines),
      ];
      return named
        .filter(({ path }) => (REPO_DIRS.test(path) || TOP_LEVEL.test(path)) && !NOT_ONE_PATH.test(path))
        .filter(({ path }) => !existsSync(join(REPO_ROOT, path.replace(/:\d+$/, ''))))
        .map(({ line, path }) => `${where(file, line)}: ${path}`);
    });
    expect(missing).toEqual([]);
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

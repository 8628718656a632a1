/**
 * Summarises a V8 .cpuprofile (from the bench's --profile, or node --cpu-prof):
 *   node dist/bench/profile-summary.js <file.cpuprofile> [--top 25]
 * Prints self time by function (file:line), self time by package/area, and inclusive time of the
 * heaviest functions — enough to see where a request's CPU goes without opening DevTools.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({
  options: { top: { type: 'string', default: '25' } },
  allowPositionals: true,
});

function shortUrl(url: string): string {
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) return url.slice(nm + 'node_modules/'.length);
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return url.slice(dist + 1);
  return url.replace(/^file:\/\//, '');
}

function area(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (!url) return functionName.startsWith('(') ? functionName : `(native) ${functionName}`;
  if (url.startsWith('node:')) return url;
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const m = /\/dist\/(apps\/[^/]+|libs\/[^/]+)\//.exec(url);
  return m ? `dossier ${m[1]}` : shortUrl(url);
}

function key(frame: CallFrame): string {
  const name = frame.functionName || '(anonymous)';
  return frame.url ? `${name}  ${shortUrl(frame.url)}:${frame.lineNumber + 1}` : name;
}

function summarise(file: string, top: number): void {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

  const selfUs = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) {
    const dt = p.timeDeltas[i + 1] ?? p.timeDeltas[i] ?? 0;
    selfUs.set(p.samples[i]!, (selfUs.get(p.samples[i]!) ?? 0) + Math.max(0, dt));
  }
  const totalUs = [...selfUs.values()].reduce((a, b) => a + b, 0);
  let idleUs = 0;
  const self = new Map<string, number>();
  const areas = new Map<string, number>();
  const incl = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    if (node.callFrame.functionName === '(idle)') {
      idleUs += us;
      continue;
    }
    self.set(key(node.callFrame), (self.get(key(node.callFrame)) ?? 0) + us);
    areas.set(area(node.callFrame), (areas.get(area(node.callFrame)) ?? 0) + us);
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const k = key(byId.get(cur)!.callFrame);
      if (seen.has(k)) continue;
      seen.add(k);
      incl.set(k, (incl.get(k) ?? 0) + us);
    }
  }
  const busyUs = totalUs - idleUs;
  const pct = (us: number) => `${((100 * us) / busyUs).toFixed(1).padStart(5)}%`;
  const rows = (m: Map<string, number>, n: number) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, us]) => `  ${pct(us)}  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`)
      .join('\n');
  console.log(`== ${file}`);
  console.log(
    `profiled ${(totalUs / 1e6).toFixed(2)} s, busy ${(busyUs / 1e6).toFixed(2)} s (${((100 * busyUs) / totalUs).toFixed(0)}%); percentages are of busy time`,
  );
  console.log(`-- self time by area\n${rows(areas, top)}`);
  console.log(`-- self time by function\n${rows(self, top)}`);
  const skip = /^\((root|program)\)/;
  const inclFiltered = new Map([...incl].filter(([k]) => !skip.test(k)));
  console.log(`-- inclusive time by function\n${rows(inclFiltered, top)}`);
}

for (const file of positionals) summarise(file, Number(values.top));

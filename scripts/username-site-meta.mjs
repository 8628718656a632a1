// `node scripts/username-site-meta.mjs <maigret data.json>`: writes libs/providers/src/username/site-meta/sites.json,
// the popularity rank and tags of each site of the shipped Sherlock list, taken from Maigret's site database
// (github.com/soxoj/maigret, maigret/resources/data.json, MIT: site-meta/LICENSE). A Sherlock site is Maigret's
// site of the same name (any case), else the one on the same host (www. dropped; the best ranked of several).
// Sherlock's list has no rank and no tags of its own (ADR 0049).
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';

const [maigretFile] = process.argv.slice(2);
if (!maigretFile) {
  console.error('usage: node scripts/username-site-meta.mjs <maigret data.json>');
  process.exit(2);
}
const sherlockFile = new URL('../libs/providers/src/username/sherlock/data.json', import.meta.url);
const target = new URL('../libs/providers/src/username/site-meta/sites.json', import.meta.url);

const raw = readFileSync(maigretFile);
const maigret = JSON.parse(raw.toString('utf8')).sites;
const sherlock = JSON.parse(readFileSync(sherlockFile, 'utf8'));

const hostOf = (template) => {
  try {
    return new URL(String(template).replaceAll('{}', 'x')).hostname.toLowerCase().replace(/^www\./, '');
  } catch {
    return null;
  }
};
const rankOf = (site) => (Number.isInteger(site.alexaRank) && site.alexaRank > 0 ? site.alexaRank : null);

const byName = new Map(Object.entries(maigret).map(([name, site]) => [name.toLowerCase(), site]));
const byHost = new Map();
for (const site of Object.values(maigret)) {
  for (const host of new Set([hostOf(site.urlMain), hostOf(site.url)])) {
    if (!host) continue;
    const held = byHost.get(host);
    if (!held || (rankOf(site) ?? Infinity) < (rankOf(held) ?? Infinity)) byHost.set(host, site);
  }
}

const sites = {};
let ranked = 0;
for (const [name, site] of Object.entries(sherlock)) {
  if (name.startsWith('$')) continue;
  const match = byName.get(name.toLowerCase()) ?? byHost.get(hostOf(site.urlMain)) ?? byHost.get(hostOf(site.url));
  if (!match) continue;
  const rank = rankOf(match);
  const tags = [...new Set((match.tags ?? []).map((t) => String(t).toLowerCase()))].sort();
  if (rank !== null) ranked++;
  sites[name] = { rank, tags };
}

const sha = createHash('sha256').update(raw).digest('hex');
// One site a line: a change of rank or tags reads as a one-line diff.
const lines = Object.entries(sites).map(([name, meta]) => `  ${JSON.stringify(name)}: ${JSON.stringify(meta)}`);
writeFileSync(
  target,
  `{\n "$source": ${JSON.stringify(`maigret data.json sha256 ${sha}`)},\n "sites": {\n${lines.join(',\n')}\n }\n}\n`,
);
console.log(`wrote ${target.pathname}: ${Object.keys(sites).length} sites, ${ranked} ranked`);

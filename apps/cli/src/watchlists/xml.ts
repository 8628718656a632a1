import { SaxesParser, type SaxesTag } from 'saxes';

/**
 * The records of a large XML file, read as a stream (ADR 0064) with saxes, a non-validating streaming XML
 * parser: each element named in `records` as a small tree, with the line it starts on, in constant memory
 * beyond one record. Namespace prefixes are dropped; a file that is not well-formed XML ends the read with
 * the line saxes stopped at.
 */

export interface XmlNode {
  name: string;
  attrs: Record<string, string>;
  children: XmlNode[];
  text: string;
}

export type XmlRecord = { line: number; node: XmlNode } | { line: number; reason: string; stopped: true };

const localName = (qualified: string) => qualified.slice(qualified.indexOf(':') + 1);

function attributesOf(tag: SaxesTag): Record<string, string> {
  const attrs: Record<string, string> = {};
  for (const [name, value] of Object.entries(tag.attributes)) {
    if (name === 'xmlns' || name.startsWith('xmlns:')) continue;
    attrs[localName(name)] = typeof value === 'string' ? value : value.value;
  }
  return attrs;
}

/**
 * The elements named `records` (local names), wherever they are, each with everything inside it. `root`:
 * the local names the document element may have; another is a shape error (`onRoot` throws it).
 */
export async function* xmlRecords(
  chunks: AsyncIterable<Buffer | string>,
  records: ReadonlySet<string>,
  onRoot: (name: string) => void,
): AsyncIterable<XmlRecord> {
  const parser = new SaxesParser({ position: true });
  const stack: XmlNode[] = []; // the record being built, outermost first
  const done: XmlRecord[] = [];
  let recordLine = 0;
  let sawRoot = false;
  let failure: { line: number; reason: string } | null = null;
  let rootError: unknown = null;
  parser.on('opentag', (tag) => {
    if (failure) return; // nothing after the first error counts
    const name = localName(tag.name);
    if (!sawRoot) {
      sawRoot = true;
      try {
        onRoot(name);
      } catch (err) {
        rootError = err;
      }
    }
    const node: XmlNode = { name, attrs: attributesOf(tag), children: [], text: '' };
    if (stack.length > 0) {
      stack[stack.length - 1]!.children.push(node);
      stack.push(node);
    } else if (records.has(name)) {
      recordLine = parser.line;
      stack.push(node);
    }
  });
  parser.on('closetag', () => {
    if (failure) return;
    const node = stack.pop();
    if (node && stack.length === 0) done.push({ line: recordLine, node });
  });
  const addText = (text: string) => {
    if (!failure && stack.length > 0) stack[stack.length - 1]!.text += text;
  };
  parser.on('text', addText);
  parser.on('cdata', addText);
  parser.on('error', (err) => {
    failure ??= { line: parser.line, reason: `invalid XML: ${err.message.replace(/^(?:[^:]*:)?\d+:\d+: /, '')}` };
  });
  const decoder = new TextDecoder('utf-8');
  const drain = function* (): Generator<XmlRecord> {
    if (rootError !== null) throw rootError;
    yield* done.splice(0);
  };
  for await (const chunk of chunks) {
    parser.write(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
    yield* drain();
    if (failure) {
      yield { ...(failure as { line: number; reason: string }), stopped: true };
      return;
    }
  }
  parser.write(decoder.decode());
  parser.close();
  yield* drain();
  if (failure) yield { ...(failure as { line: number; reason: string }), stopped: true };
}
/** The first child of `node` with this name, down a path of names: `child(n, 'akaList', 'aka')`. */
export function child(node: XmlNode | undefined, ...path: string[]): XmlNode | undefined {
  let at = node;
  for (const name of path) at = at?.children.find((c) => c.name === name);
  return at;
}

/** Every node at the end of a path of names, through every child of each name. */
export function all(node: XmlNode | undefined, ...path: string[]): XmlNode[] {
  let at = node ? [node] : [];
  for (const name of path) at = at.flatMap((n) => n.children.filter((c) => c.name === name));
  return at;
}

/** The trimmed text at a path, or null when absent or blank. */
export function textAt(node: XmlNode | undefined, ...path: string[]): string | null {
  const t = child(node, ...path)?.text.trim();
  return t ? t : null;
}

/** The trimmed texts at the end of a path, blanks left out. */
export function textsAt(node: XmlNode | undefined, ...path: string[]): string[] {
  return all(node, ...path)
    .map((n) => n.text.trim())
    .filter((t) => t !== '');
}

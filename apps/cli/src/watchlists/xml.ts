/**
 * The records of a large XML file, read as a stream (ADR 0064): each element named in `records` as a small
 * tree, with the line it starts on, in constant memory beyond one record. Enough XML for the lists'
 * published files — elements, attributes, text, CDATA, comments, processing instructions, a DOCTYPE without
 * an internal subset, the five named entities and character references; namespace prefixes are dropped.
 * Not a validating parser: a close tag that does not match its open one ends the read with its line.
 */

export interface XmlNode {
  name: string;
  attrs: Record<string, string>;
  children: XmlNode[];
  text: string;
}

export type XmlRecord = { line: number; node: XmlNode } | { line: number; reason: string; stopped: true };

const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);/g, (whole, ref: string) => {
    if (ref.startsWith('#x')) return String.fromCodePoint(parseInt(ref.slice(2), 16));
    if (ref.startsWith('#')) return String.fromCodePoint(parseInt(ref.slice(1), 10));
    return NAMED[ref] ?? whole;
  });
}

const localName = (qualified: string) => qualified.slice(qualified.indexOf(':') + 1);

function attributesOf(source: string): Record<string, string> {
  const attrs: Record<string, string> = {};
  for (const m of source.matchAll(/([^\s=/]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) {
    const name = m[1]!;
    if (name === 'xmlns' || name.startsWith('xmlns:')) continue;
    attrs[localName(name)] = decodeEntities(m[2] ?? m[3] ?? '');
  }
  return attrs;
}

/** Where a markup construct that starts at `at` ends (the index after it), or -1 when more text is needed. */
function endOf(buf: string, at: number): number {
  const ends: [string, string][] = [
    ['<!--', '-->'],
    ['<![CDATA[', ']]>'],
    ['<?', '?>'],
  ];
  for (const [open, close] of ends) {
    if (buf.startsWith(open, at)) {
      const end = buf.indexOf(close, at + open.length);
      return end < 0 ? -1 : end + close.length;
    }
  }
  // A tag: up to the first `>` outside quotes.
  let quote: string | null = null;
  for (let i = at + 1; i < buf.length; i++) {
    const c = buf[i]!;
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '>') return i + 1;
  }
  return -1;
}

const count = (text: string) => {
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
  return n;
};

/**
 * The elements named `records` (local names), wherever they are, each with everything inside it. `root`:
 * the local names the document element may have; another is a shape error (`onRoot` throws it).
 */
export async function* xmlRecords(
  chunks: AsyncIterable<Buffer | string>,
  records: ReadonlySet<string>,
  onRoot: (name: string) => void,
): AsyncIterable<XmlRecord> {
  let buf = '';
  let line = 1;
  let sawRoot = false;
  const stack: XmlNode[] = []; // the record being built, outermost first
  const decoder = new TextDecoder('utf-8');
  let recordLine = 0;
  let depthOutside = 0;
  const names: string[] = []; // open elements outside a record, for matching close tags
  for await (const chunk of withEnd(chunks)) {
    buf +=
      chunk === null ? decoder.decode() : typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    if (!sawRoot && buf.charCodeAt(0) === 0xfeff) buf = buf.slice(1);
    let at = 0;
    for (;;) {
      const lt = buf.indexOf('<', at);
      if (lt < 0) {
        // Text up to the end: kept until its element closes (it may go on in the next chunk).
        if (chunk === null && buf.slice(at).trim() !== '' && stack.length > 0)
          yield { line, reason: 'invalid XML: the file ends inside an element', stopped: true };
        break;
      }
      const text = buf.slice(at, lt);
      if (stack.length > 0 && text !== '') stack[stack.length - 1]!.text += decodeEntities(text);
      line += count(text);
      const end = endOf(buf, lt);
      if (end < 0) {
        at = lt;
        if (chunk === null) {
          yield { line, reason: 'invalid XML: the file ends inside a tag', stopped: true };
          return;
        }
        break;
      }
      const markup = buf.slice(lt, end);
      const startLine = line;
      line += count(markup);
      at = end;
      if (markup.startsWith('<![CDATA[')) {
        if (stack.length > 0) stack[stack.length - 1]!.text += markup.slice(9, -3);
        continue;
      }
      if (markup.startsWith('<!') || markup.startsWith('<?')) continue;
      const closing = markup.startsWith('</');
      const selfClosing = !closing && markup.endsWith('/>');
      const inner = markup.slice(closing ? 2 : 1, selfClosing ? -2 : -1).trim();
      const space = inner.search(/\s/);
      const name = localName(space < 0 ? inner : inner.slice(0, space));
      if (!sawRoot && !closing) {
        sawRoot = true;
        onRoot(name);
      }
      if (closing) {
        if (stack.length > 0) {
          const node = stack.pop()!;
          if (node.name !== name) {
            yield { line: startLine, reason: `invalid XML: </${name}> closes <${node.name}>`, stopped: true };
            return;
          }
          if (stack.length === 0) yield { line: recordLine, node };
        } else {
          const open = names.pop();
          depthOutside--;
          if (open !== name) {
            yield { line: startLine, reason: `invalid XML: </${name}> closes <${open ?? 'nothing'}>`, stopped: true };
            return;
          }
        }
        continue;
      }
      const node: XmlNode = { name, attrs: attributesOf(space < 0 ? '' : inner.slice(space)), children: [], text: '' };
      if (stack.length > 0) {
        stack[stack.length - 1]!.children.push(node);
        if (!selfClosing) stack.push(node);
      } else if (records.has(name)) {
        recordLine = startLine;
        if (selfClosing) yield { line: startLine, node };
        else stack.push(node);
      } else if (!selfClosing) {
        names.push(name);
        depthOutside++;
      }
    }
    buf = buf.slice(at);
    if (chunk === null) break;
  }
  if (stack.length > 0 || depthOutside > 0)
    yield { line, reason: 'invalid XML: the file ends before its elements are closed', stopped: true };
}

/** The chunks, then null once they are done. */
async function* withEnd(chunks: AsyncIterable<Buffer | string>): AsyncIterable<Buffer | string | null> {
  yield* chunks;
  yield null;
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

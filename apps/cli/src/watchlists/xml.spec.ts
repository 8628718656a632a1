import { Readable } from 'node:stream';
import { textAt, textsAt, xmlRecords, type XmlRecord } from './xml';

async function read(chunks: string[], records = ['item']): Promise<XmlRecord[]> {
  const out: XmlRecord[] = [];
  for await (const r of xmlRecords(Readable.from(chunks.map((c) => Buffer.from(c))), new Set(records), () => {}))
    out.push(r);
  return out;
}

describe('xmlRecords', () => {
  const doc =
    '<?xml version="1.0"?>\n<!-- a comment -->\n<list xmlns="urn:x" xmlns:a="urn:a">\n' +
    '  <item id="1"><a:name>Crescent Relief &amp; Trading</a:name><alias>A</alias><alias>B</alias></item>\n' +
    "  <item id='2'/>\n  <item><name><![CDATA[<Ünïcödé> & co]]></name><note>&#x41;&#66;</note></item>\n</list>\n";

  it('reads each record with its line, in any chunking, entities and CDATA decoded, prefixes dropped', async () => {
    for (const size of [1, 7, doc.length]) {
      const chunks = doc.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g'))!;
      const records = await read(chunks);
      expect(records.map((r) => r.line)).toEqual([4, 5, 6]);
      const [first, second, third] = records.map((r) => ('node' in r ? r.node : null));
      expect(first?.attrs).toEqual({ id: '1' });
      expect(textAt(first!, 'name')).toBe('Crescent Relief & Trading');
      expect(textsAt(first!, 'alias')).toEqual(['A', 'B']);
      expect(second?.attrs).toEqual({ id: '2' });
      expect(textAt(third!, 'name')).toBe('<Ünïcödé> & co');
      expect(textAt(third!, 'note')).toBe('AB');
    }
  });

  it('stops at a close tag that does not match, naming its line', async () => {
    const records = await read(['<list>\n<item><a>x</b></item>\n</list>']);
    expect(records).toEqual([{ line: 2, reason: expect.stringMatching(/^invalid XML: .*close tag/), stopped: true }]);
  });

  it('stops at a file that ends inside a tag or an element', async () => {
    expect(await read(['<list><item><a>x</a'])).toEqual([
      expect.objectContaining({ reason: expect.stringMatching(/^invalid XML: /), stopped: true }),
    ]);
    expect((await read(['<list><item><a>x</a>'])).at(-1)).toMatchObject({ stopped: true });
  });
});

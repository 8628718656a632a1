import { hasControlCharacters, isStorableText, storableText } from './text';

describe('isStorableText', () => {
  it('accepts paired surrogates (an emoji) and ordinary control characters', () => {
    expect(isStorableText('Jane \ud83d\ude00 Doe\t\r\n\u0001')).toBe(true);
  });

  it('agrees with String.prototype.isWellFormed on every short mix of surrogates', () => {
    const units = [0x41, 0x00, 0xd800, 0xdbff, 0xdc00, 0xdfff];
    const strings = [''];
    for (let len = 0; len < 4; len++)
      for (const s of strings.filter((x) => x.length === len))
        for (const u of units) strings.push(s + String.fromCharCode(u));
    for (const s of strings) {
      const wellFormed = (s as unknown as { isWellFormed(): boolean }).isWellFormed(); // ES2024, beyond our lib
      expect([s, isStorableText(s)]).toEqual([s, !s.includes('\u0000') && wellFormed]);
    }
  });
});

describe('storableText', () => {
  it('replaces each NUL and unpaired surrogate with U+FFFD, as String.prototype.toWellFormed does surrogates', () => {
    expect(storableText('a\u0000b\ud800c\udfff\ud83d\ude00\u0000')).toBe('a\ufffdb\ufffdc\ufffd\ud83d\ude00\ufffd');
    const units = [0x41, 0x00, 0xd800, 0xdc00];
    const strings = [''];
    for (let len = 0; len < 4; len++)
      for (const s of strings.filter((x) => x.length === len))
        for (const u of units) strings.push(s + String.fromCharCode(u));
    for (const s of strings) {
      const wellFormed = (s as unknown as { toWellFormed(): string }).toWellFormed().replaceAll('\u0000', '\ufffd');
      expect([s, storableText(s), isStorableText(storableText(s))]).toEqual([s, wellFormed, true]);
    }
  });
});

describe('hasControlCharacters', () => {
  it('finds C0 and C1 controls, DEL, line separators and bidi controls, and nothing in ordinary text', () => {
    for (const c of ['\u0000', '\t', '\n', '\r', '\u001b', '\u007f', '\u0085', '\u009f', '\u2028', '\u202e', '\u2067'])
      expect([c, hasControlCharacters(`a${c}b`)]).toEqual([c, true]);
    expect(hasControlCharacters('ci key \u{1F600} Zoë – prod')).toBe(false);
  });
});

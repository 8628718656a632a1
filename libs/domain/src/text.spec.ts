import { isStorableText } from './text';

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

import { ProviderError } from './provider';
import { parsePhoneInput } from './phone-input';

describe('parsePhoneInput', () => {
  it("parses a lookup's input once: the providers of one fan-out share the parse", () => {
    const input = { phone: '020 7946 0958', country: 'GB' };
    const first = parsePhoneInput(input);
    expect(first.number).toBe('+442079460958');
    expect(parsePhoneInput(input)).toBe(first);
    // Another lookup's input (an equal one too) is parsed on its own.
    expect(parsePhoneInput({ ...input })).not.toBe(first);
  });

  it('is rejected, every time, for input the gateway would have refused', () => {
    const input = { phone: 'not a number' };
    for (let i = 0; i < 2; i++) {
      expect(() => parsePhoneInput(input)).toThrow(ProviderError);
    }
  });
});

import { parseEmail } from './email';

describe('parseEmail', () => {
  it.each([
    ['simple@example.com', 'simple@example.com'],
    ['  Grace.Hopper@Example.COM ', 'Grace.Hopper@example.com'],
    ['very.common+tag@sub.example.co.uk', 'very.common+tag@sub.example.co.uk'],
    ["x!#$%&'*+/=?^_`{|}~-@example.org", "x!#$%&'*+/=?^_`{|}~-@example.org"],
    ['"john..doe"@example.com', '"john..doe"@example.com'],
    ['"with space and @"@example.com', '"with space and @"@example.com'],
    ['"escaped \\" quote"@example.com', '"escaped \\" quote"@example.com'],
    // Quotes that protect nothing are dropped (RFC 5321 §4.1.2), so both spellings compare equal.
    ['"john.doe"@example.com', 'john.doe@example.com'],
    ['"j\\ohn"@example.com', 'john@example.com'],
    // UTF-8 local parts in NFC (RFC 6532 §3.1): a decomposed "á" is the precomposed one.
    ['a\u0301@example.com', '\u00e1@example.com'],
    // The case of the local part is kept: it is the receiving system's to interpret (RFC 5321 §2.4).
    ['Grace@EXAMPLE.com', 'Grace@example.com'],
    ['user@bücher.example', 'user@xn--bcher-kva.example'],
    ['用户@例子.广告', '用户@xn--fsqu00a.xn--4rr70v'],
    ['user@example.com.', 'user@example.com'],
    [`${'a'.repeat(64)}@example.com`, `${'a'.repeat(64)}@example.com`],
  ])('accepts %j as %j', (input, normalized) => {
    expect(parseEmail(input)).toMatchObject({ syntaxValid: true, reason: null, normalized });
  });

  it.each([
    ['plainaddress', 'has no @'],
    ['@example.com', 'has nothing before the @'],
    ['user@', 'has no domain after the @'],
    ['.user@example.com', 'has a dot at the start or end of the local part, or two in a row'],
    ['user.@example.com', 'has a dot at the start or end of the local part, or two in a row'],
    ['us..er@example.com', 'has a dot at the start or end of the local part, or two in a row'],
    ['us er@example.com', 'has a character the local part cannot have unquoted'],
    ['a"b@example.com', 'has a character the local part cannot have unquoted'],
    ['"unterminated@example.com', 'has a badly quoted local part'],
    ['""@example.com', 'has an empty quoted local part'],
    ['"tab\\\tinside"@example.com', 'has a badly quoted local part'],
    ['a\u0085b@example.com', 'has a character the local part cannot have unquoted'],
    [`${'a'.repeat(65)}@example.com`, 'has a local part longer than 64 octets'],
    [`${'ü'.repeat(33)}@example.com`, 'has a local part longer than 64 octets'],
    ['user@[192.0.2.1]', 'has an address literal instead of a domain name'],
    ['user@localhost', 'has a domain without a top-level domain'],
    ['user@-example.com', 'has a domain that is not a valid host name'],
    ['user@exa_mple.com', 'has a domain that is not a valid host name'],
    [`user@${'a'.repeat(64)}.com`, 'has a domain that is not a valid host name'],
    ['user@example..com', 'has a domain that is not a valid host name'],
    // What a URL's host parser would decode or drop (percent-escapes, tabs, line breaks) is not a host name.
    ['user@ex%61mple.com', 'has a domain that is not a valid host name'],
    ['user@exa\tmple.com', 'has a domain that is not a valid host name'],
    ['user@exam\r\nple.com', 'has a domain that is not a valid host name'],
    ['user@192.168.0.1', 'has a numeric top-level domain'],
    [`${'a'.repeat(60)}@${Array.from({ length: 4 }, () => 'b'.repeat(60)).join('.')}.com`, 'is longer than 254 octets'],
  ])('refuses %j: %s', (input, reason) => {
    expect(parseEmail(input)).toMatchObject({ syntaxValid: false, reason });
  });
});

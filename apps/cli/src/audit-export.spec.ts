import { csvField } from './audit-export';

describe('csvField', () => {
  it('defuses text a spreadsheet would run as a formula (a leading quote), numbers and other text as they are', () => {
    expect(csvField('=HYPERLINK+A1')).toBe("'=HYPERLINK+A1");
    expect(csvField('+lin@example.com')).toBe("'+lin@example.com");
    expect(csvField('-2+3')).toBe("'-2+3");
    expect(csvField('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvField('\tx')).toBe("'\tx");
    expect(csvField('=a,b')).toBe(`"'=a,b"`);
    expect(csvField(-1)).toBe('-1');
    expect(csvField('req_a-b=c')).toBe('req_a-b=c');
  });

  // Spreadsheets trim leading blanks before they look for a formula (LibreOffice's "trim spaces", Excel
  // on some imports): OWASP's list is of the first character a spreadsheet sees, not the first byte.
  it.each([
    [' =HYPERLINK("http://127.0.0.1/x","y")', `"' =HYPERLINK(""http://127.0.0.1/x"",""y"")"`],
    ['   +1+1', "'   +1+1"],
    ['\t=1+1', `'\t=1+1`],
    ['\r=1+1', `"'\r=1+1"`],
    ['\n@SUM(A1)', `"'\n@SUM(A1)"`],
    [' \t\r\n-2+3', `"' \t\r\n-2+3"`],
    ['\u00a0=1+1', `'\u00a0=1+1`],
    ['\r', `"'\r"`],
  ])('defuses %j, a formula character after leading blanks', (value, field) => {
    expect(csvField(value)).toBe(field);
  });

  it('leaves text that only starts with blanks as it is (quoted, the blanks kept)', () => {
    expect(csvField(' tenant screening')).toBe('" tenant screening"');
    expect(csvField(' a=b')).toBe('" a=b"');
  });
});

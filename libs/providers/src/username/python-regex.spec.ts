import { SHERLOCK_SITES_FILE, loadSiteList } from './site-list';
import { pythonRegex } from './python-regex';

/**
 * Each expectation is what Python 3.11's `re.search(pattern, text) is not None` answers (Sherlock's own
 * test of a handle against a site's regexCheck), read off Python, not worked out by hand.
 */
const shipped = new Map(loadSiteList(SHERLOCK_SITES_FILE).map((site) => [site.name, site.regexCheck]));

describe("Sherlock's regexCheck patterns, read as Python reads them", () => {
  it.each([
    ['DigitalSpy', '^\\w{3,20}$', { josé: true, Дмитрий: true, 中文用户: true, ab: false, 'a.b': false }],
    ['Linktree', '^[\\w\\.]{2,30}$', { 'josé.m': true, zoë: true, 'a b': false }],
    ['ResearchGate', '\\w+_\\w+', { José_García: true, josé: false }],
    ['RuneScape', '^(?! )[\\w -]{1,12}(?<! )$', { 'Zoë Smith': true, 'Zoë ': false, ' Zoë': false }],
    // Code points, not UTF-16 units: 13 emoji are 13 characters, and U+2028 is one `.` matches.
    ['Minecraft', '^.{1,25}$', { ['😀'.repeat(13)]: true, ['😀'.repeat(26)]: false, 'a\u2028b': true }],
    ['HackenProof (Hackers)', '^[\\w-]{,34}$', { 'jörg-x': true, ['ö'.repeat(35)]: false }],
    ['PentesterLab', '^[\\w]{4,30}$', { Łukasz: true, Łuk: false }],
    ['GitHub', '^[a-zA-Z0-9](?:[a-zA-Z0-9]|-(?=[a-zA-Z0-9])){0,38}$', { josé: false, ghopper: true }],
  ])('%s (%s)', (name, pattern, answers: Record<string, boolean>) => {
    const regex = shipped.get(name);
    expect(regex?.source).toBe(pythonRegex(pattern).source);
    for (const [text, python] of Object.entries(answers)) expect([text, regex!.test(text)]).toEqual([text, python]);
  });

  it.each([
    // \b and \B on Unicode word characters, never in an empty string.
    ['\\bgrace\\b', { 'grace hopper': true, gracé: false, amazinggrace: false, дgrace: false }],
    ['^\\B$', { '': false }],
    ['\\Bé', { josé: true, é: false }],
    ['^\\d+$', { '٣٤': true, '123': true, '²': false }],
    ['^[^\\W_]+$', { zoë: true, zo_ë: false }],
    ['^\\s$', { '\x1c': true, '\ufeff': false, '\u3000': true }],
    ['^.$', { '\u2028': true, '\n': false, '😀': true }],
    // $ also holds before a newline that ends the string.
    ['^abc$', { 'abc\n': true, 'abc\n\n': false }],
    // Python's literals where JavaScript's u mode has syntax.
    ['^a{x}$', { 'a{x}': true }],
    ['^[]a]+$', { ']a]': true }],
    ['^[a-z-_]+$', { 'a-_z': true }],
  ])('%s', (pattern, answers: Record<string, boolean>) => {
    const regex = pythonRegex(pattern);
    for (const [text, python] of Object.entries(answers)) expect([text, regex.test(text)]).toEqual([text, python]);
  });

  it('refuses what JavaScript cannot say, naming it', () => {
    expect(() => pythonRegex('(?i)ghopper')).toThrow(/the group "\(\?i" .* has no JavaScript equivalent/);
    expect(() => pythonRegex('\\N{EM DASH}')).toThrow(/a named character/);
    expect(() => pythonRegex('^[a-z')).toThrow(/an unterminated character set at position 5/);
    expect(() => pythonRegex('\\q')).toThrow(/a bad escape \\q/);
  });
});

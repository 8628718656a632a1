/**
 * Sherlock's `regexCheck` patterns are Python's, applied with `re.search` to a `str`. Python 3 reads them
 * in Unicode: `\w` is any letter, digit or `_` of any script, `\d` any decimal digit, `\b` a boundary
 * between those and the rest, `.` and a quantifier count code points. JavaScript reads the same text in
 * ASCII (`\w` is `[A-Za-z0-9_]`) and in UTF-16 units, so a handle such as `josé` or `Дмитрий`, which
 * Sherlock checks on a site whose pattern is `^\w{3,20}$`, was refused here. `pythonRegex` translates a
 * pattern into a JavaScript one (`u` flag) that matches the same strings:
 *
 * - `\w` → `[\p{L}\p{N}_]` (Python's `str.isalnum()` or `_`: the same code points wherever both know the
 *   character), `\d` → `\p{Nd}`, `\s` → Python's whitespace (with `\x1c`–`\x1f` and `\x85`, without
 *   `\ufeff`), and their negations; inside a set too (`[^\W_]`, as alternatives and lookaheads).
 * - `\b` and `\B` → lookarounds on that `\w` (JavaScript's are ASCII even with `u`); neither holds in an
 *   empty string, as in Python.
 * - `.` → anything but `\n`; `$` → the end, or before a `\n` that ends the string; `\A`, `\Z`.
 * - Python's literals where JavaScript's `u` mode has syntax: `{` that starts no quantifier, `}` and `]`
 *   on their own, `]` first in a set, `-` after a range, escapes of punctuation; `{,n}` → `{0,n}`; octal
 *   and `\U` escapes; `(?P<name>…)`, `(?P=name)`, `(?#…)`.
 *
 * What JavaScript cannot say is refused with an Error (so a site list with it stops the worker, naming
 * the site): inline flags (`(?i)`, `(?a)`…), conditionals, `\N{…}`. Possessive quantifiers and atomic
 * groups are left for `new RegExp` to refuse.
 */
export function pythonRegex(source: string): RegExp {
  return new RegExp(translate(source), 'u');
}

/** `\w` as a set's content: Python's word characters. */
const WORD = '\\p{L}\\p{N}_';
const DIGIT = '\\p{Nd}';
/** Python's `str.isspace()`. */
const SPACE = '\\t-\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const CATEGORY: Readonly<Record<string, { set: string; negated: boolean }>> = {
  w: { set: WORD, negated: false },
  W: { set: WORD, negated: true },
  d: { set: DIGIT, negated: false },
  D: { set: DIGIT, negated: true },
  s: { set: SPACE, negated: false },
  S: { set: SPACE, negated: true },
};
const IS_WORD = `(?<=[${WORD}])`;
const NOT_AFTER_WORD = `(?<![${WORD}])`;
const BEFORE_WORD = `(?=[${WORD}])`;
const NOT_BEFORE_WORD = `(?![${WORD}])`;
/** Python's `\b` and `\B`: never in an empty string. */
const BOUNDARY = `(?:${IS_WORD}${NOT_BEFORE_WORD}|${NOT_AFTER_WORD}${BEFORE_WORD})`;
const NON_BOUNDARY = `(?:${IS_WORD}${BEFORE_WORD}|${NOT_AFTER_WORD}${NOT_BEFORE_WORD}(?:(?<=[^])|(?=[^])))`;
/** Python's single-character escapes (`\b` is one only inside a set). */
const ESCAPES: Readonly<Record<string, number>> = { a: 7, f: 12, n: 10, r: 13, t: 9, v: 11, '\\': 92 };
const OCTAL = /^[0-7]$/;
const DIGITS = /^[0-9]$/;
const HEX = /^[0-9a-fA-F]$/;
const ASCII_LETTER = /^[A-Za-z]$/;
/** Characters with a meaning in a JavaScript pattern (`u` mode): written escaped where they are literal. */
const SYNTAX = new Set('^$\\.*+?()[]{}|/');
const SET_SYNTAX = new Set('\\]^[-');

type SetItem =
  | { kind: 'char'; cp: number }
  | { kind: 'range'; from: number; to: number }
  | { kind: 'category'; set: string; negated: boolean };

class Pattern {
  private readonly chars: string[];
  private at = 0;

  constructor(readonly source: string) {
    this.chars = Array.from(source); // code points, as Python reads a str
  }

  get done(): boolean {
    return this.at >= this.chars.length;
  }
  peek(offset = 0): string | undefined {
    return this.chars[this.at + offset];
  }
  next(): string {
    const c = this.chars[this.at++];
    if (c === undefined) throw this.error('unexpected end of pattern');
    return c;
  }
  eat(c: string): boolean {
    if (this.peek() !== c) return false;
    this.at++;
    return true;
  }
  /** Up to `max` characters that `re` accepts, one at a time. */
  take(max: number, re: RegExp): string {
    let text = '';
    while (text.length < max && this.peek() !== undefined && re.test(this.peek()!)) text += this.next();
    return text;
  }
  /** Where it is, to come back to with `rewind`. */
  mark(): number {
    return this.at;
  }
  rewind(to: number): void {
    this.at = to;
  }
  error(message: string): Error {
    return new Error(`${message} at position ${this.at} of the Python pattern ${JSON.stringify(this.source)}`);
  }
}

/** A code point as a literal of a JavaScript pattern (`u` mode), outside or inside a set. */
function literal(cp: number, inSet: boolean): string {
  const c = String.fromCodePoint(cp);
  if ((inSet ? SET_SYNTAX : SYNTAX).has(c)) return `\\${c}`;
  if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || (cp >= 0xd800 && cp <= 0xdfff) || cp === 0x2028 || cp === 0x2029)
    return `\\u{${cp.toString(16)}}`;
  return c;
}

function translate(source: string): string {
  const p = new Pattern(source);
  let out = '';
  while (!p.done) {
    const c = p.next();
    if (c === '\\') out += escapeOutside(p);
    else if (c === '[') out += characterSet(p);
    else if (c === '.') out += '[^\\n]';
    else if (c === '$') out += '(?=\\n?$)';
    else if (c === '{') out += quantifierOrBrace(p);
    else if (c === '}' || c === ']') out += `\\${c}`;
    else if (c === '(' && p.peek() === '?') out += group(p);
    else out += c;
  }
  return out;
}

/** After `{`: a quantifier as Python reads one (`{m}`, `{m,}`, `{,n}`, `{m,n}`, `{,}`), else a literal `{`. */
function quantifierOrBrace(p: Pattern): string {
  const from = p.mark();
  const lo = p.take(Infinity, DIGITS);
  const comma = p.eat(',');
  const hi = comma ? p.take(Infinity, DIGITS) : '';
  if ((lo !== '' || comma) && p.eat('}')) {
    const min = lo === '' ? '0' : lo;
    return comma ? `{${min},${hi}}` : `{${min}}`;
  }
  p.rewind(from);
  return '\\{';
}

/** After `(?`: the group's opening in JavaScript (its content is translated as the rest is). */
function group(p: Pattern): string {
  p.next(); // ?
  const c = p.peek();
  if (c === ':' || c === '=' || c === '!') return `(?${p.next()}`;
  if (c === '<' && (p.peek(1) === '=' || p.peek(1) === '!')) return `(?${p.next()}${p.next()}`;
  if (c === 'P' && p.peek(1) === '<') {
    p.next();
    p.next();
    return `(?<${nameUntil(p, '>')}>`;
  }
  if (c === 'P' && p.peek(1) === '=') {
    p.next();
    p.next();
    return `\\k<${nameUntil(p, ')')}>`;
  }
  if (c === '#') {
    while (p.next() !== ')');
    return '';
  }
  throw p.error(
    `the group "(?${c ?? ''}" (inline flags, a conditional or an atomic group) has no JavaScript equivalent`,
  );
}

function nameUntil(p: Pattern, end: string): string {
  let name = '';
  for (let c = p.next(); c !== end; c = p.next()) name += c;
  if (!/^[\p{L}_][\p{L}\p{N}_]*$/u.test(name)) throw p.error(`bad group name ${JSON.stringify(name)}`);
  return name;
}

/** After `\` outside a set. */
function escapeOutside(p: Pattern): string {
  const c = p.next();
  const category = CATEGORY[c];
  if (category) return category.negated ? `[^${category.set}]` : `[${category.set}]`;
  if (c === 'A') return '^';
  if (c === 'Z') return '$';
  if (c === 'b') return BOUNDARY;
  if (c === 'B') return NON_BOUNDARY;
  if (c === '0') return literal(parseInt(`0${p.take(2, OCTAL)}`, 8), false);
  if (DIGITS.test(c)) {
    // Three octal digits are a character; otherwise one or two digits are a group reference.
    let digits = c;
    if (p.peek() !== undefined && DIGITS.test(p.peek()!)) {
      digits += p.next();
      if (OCTAL.test(digits[0]!) && OCTAL.test(digits[1]!) && p.peek() !== undefined && OCTAL.test(p.peek()!)) {
        const cp = parseInt(digits + p.next(), 8);
        if (cp > 0o377) throw p.error('an octal escape over \\377');
        return literal(cp, false);
      }
    }
    return `(?:\\${digits})`;
  }
  return literal(escapedCharacter(p, c), false);
}

/** The character an escape (after `\` and its first character `c`) stands for, as both contexts read it. */
function escapedCharacter(p: Pattern, c: string): number {
  const simple = ESCAPES[c];
  if (simple !== undefined) return simple;
  const hex = (n: number) => {
    const digits = p.take(n, HEX);
    if (digits.length !== n) throw p.error(`an incomplete escape \\${c}${digits}`);
    return parseInt(digits, 16);
  };
  if (c === 'x') return hex(2);
  if (c === 'u') return hex(4);
  if (c === 'U') {
    const cp = hex(8);
    if (cp > 0x10ffff) throw p.error('an escape beyond the last code point');
    return cp;
  }
  if (c === 'N') throw p.error('a named character (\\N{…}) has no JavaScript equivalent');
  if (ASCII_LETTER.test(c) || DIGITS.test(c)) throw p.error(`a bad escape \\${c}`);
  return c.codePointAt(0)!;
}

/** After `[`: the set, as a JavaScript set — or, with a negated category in it, alternatives. */
function characterSet(p: Pattern): string {
  const negate = p.eat('^');
  const items: SetItem[] = [];
  for (;;) {
    if (p.done) throw p.error('an unterminated character set');
    const c = p.next();
    if (c === ']' && items.length > 0) break;
    const first = setAtom(p, c);
    if (p.peek() === '-' && p.peek(1) !== undefined) {
      p.next();
      const c2 = p.next();
      if (c2 === ']') {
        items.push(first, { kind: 'char', cp: 0x2d });
        break;
      }
      const second = setAtom(p, c2);
      if (first.kind !== 'char' || second.kind !== 'char' || second.cp < first.cp)
        throw p.error('a bad character range');
      items.push({ kind: 'range', from: first.cp, to: second.cp });
    } else items.push(first);
  }
  let plain = '';
  const negated: string[] = [];
  for (const item of items) {
    if (item.kind === 'char') plain += literal(item.cp, true);
    else if (item.kind === 'range') plain += `${literal(item.from, true)}-${literal(item.to, true)}`;
    else if (item.negated) negated.push(item.set);
    else plain += item.set;
  }
  if (negated.length === 0) return `[${negate ? '^' : ''}${plain}]`;
  if (!negate) return `(?:${[...(plain ? [`[${plain}]`] : []), ...negated.map((set) => `[^${set}]`)].join('|')})`;
  // Outside [plain], and inside every set a negated category leaves out.
  const last = negated.pop()!;
  return `(?:${plain ? `(?![${plain}])` : ''}${negated.map((set) => `(?=[${set}])`).join('')}[${last}])`;
}

/** One member of a set: a character or a category (after `\`). */
function setAtom(p: Pattern, c: string): SetItem {
  if (c !== '\\') return { kind: 'char', cp: c.codePointAt(0)! };
  const e = p.next();
  const category = CATEGORY[e];
  if (category) return { kind: 'category', ...category };
  if (e === 'b') return { kind: 'char', cp: 8 };
  if (OCTAL.test(e)) {
    const cp = parseInt(e + p.take(2, OCTAL), 8);
    if (cp > 0o377) throw p.error('an octal escape over \\377');
    return { kind: 'char', cp };
  }
  return { kind: 'char', cp: escapedCharacter(p, e) };
}

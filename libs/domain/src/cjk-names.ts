/**
 * Family names of two characters (Chinese, and the Korean ones written in Hangul), in simplified and
 * traditional writing: the common ones, so that 欧阳娜娜 is "Ouyang Nana", not "Ou Yangnana". A name
 * with a rarer one is split after its first character (ADR 0012, accepted gaps).
 */
const COMPOUND_FAMILY_NAMES = new Set(
  (
    '欧阳 歐陽 司马 司馬 诸葛 諸葛 上官 东方 東方 皇甫 尉迟 尉遲 公孙 公孫 慕容 长孙 長孫 宇文 司徒 夏侯 令狐 ' +
    '端木 澹台 澹臺 南宫 南宮 西门 西門 独孤 獨孤 呼延 轩辕 軒轅 钟离 鍾離 申屠 闻人 聞人 百里 ' +
    '남궁 황보 제갈 선우 독고 사공'
  ).split(' '),
);

/** A whole name written as one word of two to four Han characters, or of two to four Hangul syllables. */
const CJK_NAME = /^(?:\p{Script=Han}{2,4}|\p{Script=Hangul}{2,4})$/u;

/**
 * A name written in Chinese characters or Hangul as one word ("王小明"), with a space between its family
 * name and its given name ("王 小明"), as the name is romanised ("Wang Xiaoming", ISO 7098 and GB/T 28039;
 * "Gim Minjun"): transliterated whole, it would be one word ("wangxiaoming") that no spaced spelling finds.
 * Anything else — Latin text, a foreign name written in characters with a separator ("约翰·史密斯"), a
 * name already spaced — is returned as it is.
 */
export function spacedCjkName(name: string): string {
  const trimmed = name.trim();
  if (!CJK_NAME.test(trimmed)) return name;
  const chars = [...trimmed];
  const family = chars.length > 2 && COMPOUND_FAMILY_NAMES.has(chars.slice(0, 2).join('')) ? 2 : 1;
  return `${chars.slice(0, family).join('')} ${chars.slice(family).join('')}`;
}

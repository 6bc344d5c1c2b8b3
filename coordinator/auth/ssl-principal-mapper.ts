/**
 * `ssl.principal.mapping.rules`: how the RFC 2253 subject of a verified
 * client certificate becomes the principal's name, with Kafka's grammar and
 * semantics (clients/src/main/java/org/apache/kafka/common/security/ssl/SslPrincipalMapper.java):
 *
 *   rules   = rule *( "," rule )       (blank rules are skipped)
 *   rule    = "DEFAULT" | "RULE:" pattern "/" replacement "/" [ "L" | "U" ]
 *
 * where `pattern` and `replacement` may hold any character but `/` and `\`,
 * or a backslash followed by any character. Rules are tried in order; the
 * first whose pattern matches the whole subject gives the name (every match
 * of the pattern replaced by the replacement, as Java's String.replaceAll,
 * then lower- or upper-cased with L or U); DEFAULT gives the subject itself.
 * When no rule applies the client is refused (Kafka's NoMatchingRule).
 *
 * In a replacement, `$n` is group n (Java's rule: more digits are taken while
 * the number stays a group; a `$n` beyond the groups is literal text, as
 * Kafka's escapeLiteralBackReferences makes it), `${name}` a named group, `\x`
 * the character x.
 *
 * Deviation: patterns are JavaScript regular expressions, not Java's. The
 * common syntax is the same; Java-only syntax (inline flags like `(?i)`,
 * `\Q…\E`, possessive quantifiers) is refused when the configuration is read.
 */

type Piece = string | { group: number | string };

interface Rule {
  text: string;
  /** null for DEFAULT. */
  whole: RegExp | null;
  all: RegExp | null;
  replacement: Piece[];
  caseChange: 'L' | 'U' | '';
}

export class SslPrincipalMapper {
  private readonly rules: Rule[];

  /** Throws an Error naming the bad rule. */
  constructor(rules: string = 'DEFAULT') {
    this.rules = parseRules(rules);
    if (this.rules.length === 0) throw new Error(`ssl.principalMappingRules ${JSON.stringify(rules)} has no rule: every client certificate would be refused`);
  }

  /** The principal name for an RFC 2253 subject, or null when no rule applies. */
  name(distinguishedName: string): string | null {
    for (const rule of this.rules) {
      if (rule.whole === null) return distinguishedName;
      if (!rule.whole.test(distinguishedName)) continue;
      const pieces = rule.replacement;
      const result = distinguishedName.replace(rule.all!, (...args: unknown[]) => {
        const named = typeof args[args.length - 1] === 'object' ? (args[args.length - 1] as Record<string, string | undefined> | undefined) : undefined;
        return pieces
          .map((p) => (typeof p === 'string' ? p : typeof p.group === 'number' ? ((args[p.group] as string | undefined) ?? '') : (named?.[p.group] ?? '')))
          .join('');
      });
      return rule.caseChange === 'L' ? result.toLowerCase() : rule.caseChange === 'U' ? result.toUpperCase() : result;
    }
    return null;
  }

  toString(): string {
    return this.rules.map((r) => r.text).join(',');
  }
}

function parseRules(text: string): Rule[] {
  const rules: Rule[] = [];
  let at = 0;
  const skipBlanks = (): void => {
    while (at < text.length && /\s/.test(text[at]!)) at++;
  };
  /** Reads up to the next unescaped '/', which it consumes; null when there is none. */
  const field = (): string | null => {
    let value = '';
    while (at < text.length) {
      const c = text[at]!;
      if (c === '/') {
        at++;
        return value;
      }
      if (c === '\\') {
        if (at + 1 >= text.length) return null;
        value += c + text[at + 1]!;
        at += 2;
      } else {
        value += c;
        at++;
      }
    }
    return null;
  };
  for (;;) {
    skipBlanks();
    const start = at;
    if (at >= text.length) break;
    if (text[at] === ',') {
      at++;
      continue;
    }
    if (text.startsWith('DEFAULT', at)) {
      at += 'DEFAULT'.length;
      rules.push({ text: 'DEFAULT', whole: null, all: null, replacement: [], caseChange: '' });
    } else if (text.startsWith('RULE:', at)) {
      at += 'RULE:'.length;
      const pattern = field();
      const replacement = pattern === null ? null : field();
      if (pattern === null || replacement === null)
        throw new Error(`ssl.principalMappingRules: rule ${JSON.stringify(text.slice(start))} is not RULE:pattern/replacement/[LU]`);
      let caseChange: Rule['caseChange'] = '';
      if (text[at] === 'L' || text[at] === 'U') caseChange = text[at++] as 'L' | 'U';
      rules.push(compileRule(text.slice(start, at), pattern, replacement, caseChange));
    } else {
      const end = text.indexOf(',', at);
      throw new Error(
        `ssl.principalMappingRules: invalid rule ${JSON.stringify(text.slice(start, end < 0 ? undefined : end).trim())} (expected DEFAULT or RULE:pattern/replacement/[LU])`,
      );
    }
    skipBlanks();
    if (at < text.length && text[at] !== ',') {
      throw new Error(
        `ssl.principalMappingRules: rule ${JSON.stringify(text.slice(start, at).trim())} is followed by ${JSON.stringify(text.slice(at))}, not by "," or the end`,
      );
    }
  }
  return rules;
}

function compileRule(text: string, pattern: string, replacement: string, caseChange: Rule['caseChange']): Rule {
  let all: RegExp;
  let whole: RegExp;
  try {
    all = new RegExp(pattern, 'g');
    whole = new RegExp(`^(?:${pattern})$`);
  } catch (error) {
    throw new Error(`ssl.principalMappingRules: rule ${JSON.stringify(text)}: the pattern is not a valid regular expression: ${(error as Error).message}`);
  }
  const groups = new RegExp(`${pattern}|`).exec('')!.length - 1;
  const names = new Set(Object.keys(new RegExp(`${pattern}|`).exec('')!.groups ?? {}));
  return { text, whole, all, replacement: compileReplacement(text, replacement, groups, names), caseChange };
}

/** Java's Matcher.appendReplacement syntax, with Kafka's literal out-of-range references. */
function compileReplacement(rule: string, replacement: string, groups: number, names: Set<string>): Piece[] {
  const pieces: Piece[] = [];
  let literal = '';
  const bad = (why: string): Error => new Error(`ssl.principalMappingRules: rule ${JSON.stringify(rule)}: replacement ${JSON.stringify(replacement)} ${why}`);
  for (let i = 0; i < replacement.length;) {
    const c = replacement[i]!;
    if (c === '\\') {
      if (i + 1 >= replacement.length) throw bad('ends with a lone backslash');
      literal += replacement[i + 1]!;
      i += 2;
      continue;
    }
    if (c !== '$') {
      literal += c;
      i++;
      continue;
    }
    const next = replacement[i + 1];
    if (next === '{') {
      const close = replacement.indexOf('}', i + 2);
      const name = close < 0 ? '' : replacement.slice(i + 2, close);
      if (!names.has(name)) throw bad(`names the group \${${name}}, which the pattern does not have`);
      pieces.push(literal, { group: name });
      literal = '';
      i = close + 1;
      continue;
    }
    if (next === undefined || !/[0-9]/.test(next)) throw bad('has a "$" not followed by a group number or {name} (write \\$ for a literal $)');
    let group = Number(next);
    if (group > groups) {
      if (groups === 0) throw bad(`refers to group ${group}, but the pattern has no groups`);
      // Kafka makes a reference past the last group literal text.
      literal += '$';
      i++;
      continue;
    }
    i += 2;
    while (i < replacement.length && /[0-9]/.test(replacement[i]!) && group * 10 + Number(replacement[i]) <= groups)
      group = group * 10 + Number(replacement[i++]);
    pieces.push(literal, { group });
    literal = '';
  }
  pieces.push(literal);
  return pieces.filter((p) => p !== '');
}

import { createScanner, parseTree, getNodeValue, printParseErrorCode, type Node, type ParseError } from 'jsonc-parser';

/** What each of jsonc-parser's error codes means, in words: what was expected. */
const EXPECTED: Record<string, string> = {
  InvalidSymbol: 'a JSON value, key or punctuation',
  InvalidNumberFormat: 'a number in JSON form (no leading zeros, hex or trailing dot)',
  PropertyNameExpected: 'a key in double quotes',
  ValueExpected: 'a value',
  ColonExpected: 'a colon after the key',
  CommaExpected: 'a comma before the next entry, or the closing } or ]',
  CloseBraceExpected: 'a comma or the closing }',
  CloseBracketExpected: 'a comma or the closing ]',
  EndOfFileExpected: 'the end of the file after the closing }',
  InvalidCommentToken: 'a comment to start with // or /*',
  UnexpectedEndOfComment: 'the end of the comment (*/)',
  UnexpectedEndOfString: 'the closing double quote of the string',
  UnexpectedEndOfNumber: 'the rest of the number',
  InvalidUnicode: 'four hex digits after \\u',
  InvalidEscapeCharacter: 'a valid escape (\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)',
  InvalidCharacter: 'no control character inside a string',
};

/** `expected a comma before the next entry, or the closing } or ], found "flexibleVersions"`: what was expected, and the token found there. */
function describeParseError(error: ParseError, text: string): string {
  const code = printParseErrorCode(error.error);
  const expected = EXPECTED[code] ?? code;
  const token = text.slice(error.offset, error.offset + Math.max(error.length, 1)).split(/\r?\n/)[0]!;
  const found = error.offset >= text.length ? 'the end of the file' : token.trim() === '' ? 'whitespace' : token.length > 30 ? `${token.slice(0, 30)}…` : token;
  return `expected ${expected}, found ${found}`;
}
import { SchemaError, type Diagnostic } from './diagnostics.js';

/** A JSON path into a schema document, e.g. ['fields', 3, 'tag']. */
export type JsonPath = (string | number)[];

/**
 * A schema file parsed with comments allowed, keeping the syntax tree so that
 * every diagnostic can name file:line:column.
 */
export class SchemaSource {
  private readonly lineStarts: number[];

  private constructor(
    readonly file: string,
    readonly text: string,
    readonly root: Node,
    readonly value: unknown,
  ) {
    this.lineStarts = [0];
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) this.lineStarts.push(i + 1);
  }

  /** Parses JSONC; a syntax error becomes a SchemaError pointing at the bad token. */
  static parse(file: string, text: string): SchemaSource {
    const tooDeep = firstTooDeep(text);
    if (tooDeep !== undefined) {
      const probe = new SchemaSource(file, text, { type: 'null', offset: 0, length: 0 } as Node, null);
      throw new SchemaError([
        {
          severity: 'error',
          file,
          ...probe.lineColumn(tooDeep),
          jsonPath: '',
          message: `nesting deeper than ${MAX_NESTING} levels (Kafka's deepest schema nests under 20)`,
        },
      ]);
    }
    const errors: ParseError[] = [];
    const root = parseTree(text, errors, { allowTrailingComma: false, disallowComments: false });
    if (errors.length > 0 || root === undefined) {
      const probe = new SchemaSource(file, text, { type: 'null', offset: 0, length: 0 } as Node, null);
      const diagnostics: Diagnostic[] = errors.slice(0, 5).map((e) => ({
        severity: 'error',
        file,
        ...probe.lineColumn(e.offset),
        jsonPath: '',
        message: `invalid JSON: ${describeParseError(e, text)}`,
      }));
      if (diagnostics.length === 0) diagnostics.push({ severity: 'error', file, line: 1, column: 1, jsonPath: '', message: 'empty document' });
      throw new SchemaError(diagnostics);
    }
    return new SchemaSource(file, text, root, getNodeValue(root));
  }

  /** 1-based line and column of a character offset. */
  lineColumn(offset: number): { line: number; column: number } {
    let low = 0;
    let high = this.lineStarts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (this.lineStarts[mid]! <= offset) low = mid;
      else high = mid - 1;
    }
    return { line: low + 1, column: offset - this.lineStarts[low]! + 1 };
  }

  /**
   * Locates a JSON path: the value's node, or for a missing key the nearest
   * enclosing node that exists. A key's position is that of its property name,
   * which is where a reader looks.
   */
  locate(path: JsonPath): { line: number; column: number } {
    let node: Node = this.root;
    for (const segment of path) {
      const next = child(node, segment);
      if (next === undefined) break;
      node = next;
    }
    const anchor = node.parent?.type === 'property' ? node.parent : node;
    return this.lineColumn(anchor.offset);
  }
}

function child(node: Node, segment: string | number): Node | undefined {
  if (node.type === 'array' && typeof segment === 'number') return node.children?.[segment];
  if (node.type === 'object' && typeof segment === 'string') {
    for (const property of node.children ?? []) {
      if (property.children?.[0]?.value === segment) return property.children[1];
    }
  }
  return undefined;
}

/** Formats a JSON path as `fields[3].tag`. */
export function formatJsonPath(path: JsonPath): string {
  let out = '';
  for (const segment of path) {
    out += typeof segment === 'number' ? `[${segment}]` : out === '' ? segment : `.${segment}`;
  }
  return out;
}

/** JSON nesting a schema may have; far beyond any real schema, well within the parser's recursion. */
export const MAX_NESTING = 128;

/** The offset where nesting first exceeds MAX_NESTING, found with the scanner (no recursion). */
function firstTooDeep(text: string): number | undefined {
  const scanner = createScanner(text, false);
  let depth = 0;
  for (let token = scanner.scan(); token !== TOKEN.EOF; token = scanner.scan()) {
    if (token === TOKEN.OpenBrace || token === TOKEN.OpenBracket) {
      if (++depth > MAX_NESTING) return scanner.getTokenOffset();
    } else if (token === TOKEN.CloseBrace || token === TOKEN.CloseBracket) {
      depth--;
    }
  }
  return undefined;
}

// jsonc-parser's SyntaxKind is a const enum, which isolated modules cannot read; its values are part of its API.
const TOKEN = { OpenBrace: 1, CloseBrace: 2, OpenBracket: 3, CloseBracket: 4, EOF: 17 } as const;

/** Identifiers in generated code. */

const RESERVED = new Set(
  (
    'break case catch class const continue debugger default delete do else enum export extends false finally for function if ' +
    'import in instanceof new null return super switch this throw true try typeof var void while with yield let static ' +
    'implements interface package private protected public await arguments eval undefined ' +
    // locals and parameters of the generated functions
    'r w m o i json version flexible at error tag size start count next unknown path _unknownTaggedFields'
  ).split(' '),
);

/** A local variable for a field, steering clear of keywords and the generated code's own names. */
export function localName(propertyName: string): string {
  return RESERVED.has(propertyName) ? `${propertyName}_` : propertyName;
}

/** `{ a, b: b_ }` entries for an object literal built from locals. */
export function shorthand(propertyName: string, local: string): string {
  return propertyName === local ? local : `${propertyName}: ${local}`;
}

/** Escapes text for a JSDoc comment. */
export function docText(text: string): string {
  return text.replace(/\*\//g, '*\\/').replace(/\s+/g, ' ').trim();
}

/**
 * The evolution rules of `kipgen diff` and `kipgen baseline`, with why each
 * exists. RULES.md beside this file explains where they differ from Apache
 * Kafka's evolution checker and why.
 */

export type Severity = 'breaking' | 'compatible';

export interface Rule {
  severity: Severity;
  /** What goes wrong for a peer on the previous schema, or why the change is safe. */
  why: string;
  /** True when the change is wire-safe but breaks code that uses the generated TypeScript API. */
  apiBreak?: boolean;
}

export const RULES = {
  // --- messages
  'message-added': { severity: 'compatible', why: 'a new spec changes nothing that a peer already speaks' },
  'message-removed': {
    severity: 'breaking',
    why: 'peers still send and expect this message; a spec whose versions are "none" must stay so that its apiKey is never reused',
  },
  'empty-message-removed': { severity: 'compatible', why: 'a spec with no versions and no apiKey generates nothing and reserves nothing' },
  'message-renamed': {
    severity: 'compatible',
    why: 'messages are paired by apiKey on the wire, so the bytes are unchanged; the generated codec and its types are renamed',
    apiBreak: true,
  },
  'api-key-changed': { severity: 'breaking', why: 'peers route the message by its apiKey (or coordinator record type)' },
  'api-key-reused': { severity: 'breaking', why: 'the apiKey belongs to another message; a peer would decode one as the other' },
  'type-changed': { severity: 'breaking', why: 'the spec type decides the framing and the request/response pairing' },
  'api-pairing': {
    severity: 'breaking',
    why: 'a request and its response are one API: they must keep the same validVersions and flexibleVersions',
  },
  // --- versions
  'version-added': { severity: 'compatible', why: 'peers negotiate versions (ApiVersions), so a new version is only used by peers that know it' },
  'version-removed': {
    severity: 'breaking',
    why: 'peers on the previous schema still send this version; only the lowest versions that were listed in deprecatedVersions may be removed',
  },
  'deprecated-version-removed': {
    severity: 'compatible',
    why: 'the removed versions were announced in deprecatedVersions, the deliberate way to drop old versions (as Kafka 4.0 did, KIP-896)',
  },
  'version-added-below-lowest': {
    severity: 'breaking',
    why: 'versions below the lowest were removed earlier and may have meant something else; they cannot come back (Kafka rejects it too)',
  },
  'deprecated-versions-changed': { severity: 'compatible', why: 'deprecatedVersions is an announcement only; the wire is unchanged' },
  'unstable-changed': { severity: 'compatible', why: 'latestVersionUnstable only decides whether brokers advertise the latest version' },
  'flexible-versions-changed': {
    severity: 'breaking',
    why: 'flexibility decides the header version, compact strings and arrays, and the tagged-field sections: a released version cannot change it, and flexibleVersions may only grow (Kafka rejects it too)',
  },
  'header-version-changed': { severity: 'breaking', why: 'the peer parses the header before the body; a different header version misframes the whole message' },
  // --- fields, per released version
  'field-added': { severity: 'breaking', why: 'a new regular field shifts every byte after it; add it in a new version' },
  'field-removed': { severity: 'breaking', why: 'the peer still writes or expects the field; end its versions before a new version instead' },
  'field-moved': {
    severity: 'breaking',
    why: 'fields are read in order: a peer on the previous schema reads them into the wrong places (even two fields of the same type swap their values)',
  },
  'field-renamed': {
    severity: 'compatible',
    why: 'names never reach the wire (Kafka accepts it too), but the TypeScript property and JSON key are renamed',
    apiBreak: true,
  },
  'struct-renamed': {
    severity: 'compatible',
    why: 'struct names never reach the wire, but the generated interface is renamed',
    apiBreak: true,
  },
  'field-type-changed': { severity: 'breaking', why: 'the peer reads a different number or kind of bytes' },
  'nullability-changed': {
    severity: 'breaking',
    why: 'narrowed: null can no longer be read or written; widened: a new peer may send null, which a peer on the previous schema rejects',
  },
  'encoding-changed': {
    severity: 'breaking',
    why: 'compact and classic strings, bytes and arrays have different length prefixes (e.g. a field-level flexibleVersions override was dropped)',
  },
  'default-changed': {
    severity: 'breaking',
    why: 'peers fill the default when a version lacks the field and omit tagged fields equal to it: old and new peers would disagree on the value',
  },
  'tagged-field-added': {
    severity: 'breaking',
    why: 'a peer on the previous schema skips the unknown tag, so the sender cannot know whether it was honoured; add tagged fields in a new version (Kafka rejects this too)',
  },
  'tagged-field-removed': { severity: 'breaking', why: 'peers on the previous schema still send the tag and rely on it being read' },
  'tag-changed': { severity: 'breaking', why: 'the peer finds the field under its old tag' },
  'tag-reused': {
    severity: 'breaking',
    why: 'a tag number, once used for a field, keeps that meaning in every version; a peer would read one field as another',
  },
  'tagging-changed': { severity: 'breaking', why: 'a field moved between the regular fields and the tagged-field section' },
  'layout-changed': { severity: 'breaking', why: 'the version produces different bytes than before' },
  // --- wire equality with upstream
  'version-not-upstream': {
    severity: 'breaking',
    why: 'an existing Kafka API gained a version upstream Kafka does not have: a Kafka peer would negotiate it and disagree',
  },
} as const satisfies Record<string, Rule>;

export type RuleId = keyof typeof RULES;

export function ruleOf(id: RuleId): Rule {
  return RULES[id];
}

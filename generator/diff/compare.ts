import type { JsonPath } from '../source.js';
import { pairByApiKey } from '../spec.js';
import {
  fieldSignature,
  isArray,
  isStruct,
  locationOf,
  typeText,
  versionRanges,
  wireSignature,
  type FieldLayout,
  type MessageLayout,
  type StructLayout,
  type VersionLayout,
} from './layout.js';
import { RULES, type RuleId, type Severity } from './rules.js';

/**
 * Compares message layouts: evolution (OLD → NEW, is NEW safe for peers on
 * OLD?) and wire equality (does OURS put the same bytes on the wire as
 * UPSTREAM for every version both declare?). See rules.ts and RULES.md.
 */

export interface Change {
  severity: Severity;
  rule: RuleId;
  /** The message (spec) name, as in NEW when it exists there. */
  message: string;
  /** The versions concerned, as ranges (`0-5`, `1, 3-4`); absent for message-level changes. */
  versions?: string;
  /** Field path inside the message, e.g. `Topics[].Partitions[].AcknowledgeType`; tagged fields end in `(tag N)`. */
  path?: string;
  /** What changed, e.g. `int32 → int64`. */
  detail: string;
  /** Why this is breaking or safe. */
  why: string;
  /** The change is wire-safe but breaks importers of the generated TypeScript API. */
  apiBreak?: boolean;
  /** `file:line:column` in NEW (or in OLD, when the thing is gone from NEW). */
  location?: string;
}

export interface DiffReport {
  changes: Change[];
  breaking: number;
  compatible: number;
  /** Message pairs compared (old name → new name). */
  compared: { old: string; new: string }[];
}

export interface WireEqualReport {
  /** Differences between OURS and UPSTREAM (all breaking). */
  changes: Change[];
  /** Specs of OURS that upstream does not have at all (e.g. the KIP-1289 APIs). */
  notUpstream: string[];
  /** Spec → versions compared. */
  compared: { name: string; upstream: string; versions: string }[];
}

type Mode = 'evolution' | 'wire';

const FAMILIES: Record<string, string> = { request: 'api', response: 'api', 'coordinator-key': 'record', 'coordinator-value': 'record' };

/** Collects changes, merging the same change found in several versions into one with a version range. */
class Collector {
  private readonly byKey = new Map<string, { change: Omit<Change, 'versions'>; versions: Set<number> | undefined }>();
  /** Versions (per message) in which a breaking change was recorded: for the safety net. */
  readonly brokenVersions = new Map<string, Set<number>>();

  add(rule: RuleId, message: string, detail: string, extra: { version?: number; versions?: Iterable<number>; path?: string; location?: string } = {}): void {
    const def = RULES[rule];
    const change: Omit<Change, 'versions'> = { severity: def.severity, rule, message, detail, why: def.why };
    if (extra.path !== undefined && extra.path !== '') change.path = extra.path;
    if ('apiBreak' in def && def.apiBreak) change.apiBreak = true;
    if (extra.location !== undefined) change.location = extra.location;
    const versions = extra.version !== undefined ? [extra.version] : extra.versions !== undefined ? [...extra.versions] : undefined;
    const key = JSON.stringify([rule, message, change.path ?? '', detail, change.location ?? '', versions === undefined]);
    let entry = this.byKey.get(key);
    if (entry === undefined) {
      entry = { change, versions: versions === undefined ? undefined : new Set() };
      this.byKey.set(key, entry);
    }
    if (versions !== undefined) for (const v of versions) entry.versions!.add(v);
    if (def.severity === 'breaking' && versions !== undefined) {
      let set = this.brokenVersions.get(message);
      if (set === undefined) this.brokenVersions.set(message, (set = new Set()));
      for (const v of versions) set.add(v);
    }
  }

  changes(): Change[] {
    const out: Change[] = [];
    for (const { change, versions } of this.byKey.values()) {
      const c: Change = { ...change };
      if (versions !== undefined && versions.size > 0) c.versions = versionRanges(versions);
      out.push(reorder(c));
    }
    const first = (c: Change): number => (c.versions === undefined ? -1 : Number(c.versions.split(/[-,]/)[0]));
    return out.sort(
      (a, b) =>
        cmp(a.message, b.message) ||
        (a.severity === b.severity ? 0 : a.severity === 'breaking' ? -1 : 1) ||
        first(a) - first(b) ||
        cmp(a.path ?? '', b.path ?? '') ||
        cmp(a.rule, b.rule) ||
        cmp(a.detail, b.detail),
    );
  }
}

/** Stable key order in --json output. */
function reorder(c: Change): Change {
  const out: Change = { severity: c.severity, rule: c.rule, message: c.message } as Change;
  if (c.versions !== undefined) out.versions = c.versions;
  if (c.path !== undefined) out.path = c.path;
  out.detail = c.detail;
  out.why = c.why;
  if (c.apiBreak) out.apiBreak = true;
  if (c.location !== undefined) out.location = c.location;
  return out;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function report(collector: Collector, compared: DiffReport['compared']): DiffReport {
  const changes = collector.changes();
  return {
    changes,
    breaking: changes.filter((c) => c.severity === 'breaking').length,
    compatible: changes.filter((c) => c.severity === 'compatible').length,
    compared,
  };
}

function where(layout: MessageLayout, path: JsonPath): string | undefined {
  return layout.locate?.(path);
}

// ---------------------------------------------------------------- trees

/**
 * Compares two schema trees. Specs are paired by name; a spec missing from NEW
 * is paired with a NEW spec of the same type and apiKey as a rename. With
 * `pairSingle`, the two trees hold one spec each and are paired whatever their names.
 */
export function compareTrees(olds: readonly MessageLayout[], news: readonly MessageLayout[], options: { pairSingle?: boolean } = {}): DiffReport {
  const collector = new Collector();
  const compared: DiffReport['compared'] = [];
  if (options.pairSingle && olds.length === 1 && news.length === 1) {
    const [o, n] = [olds[0]!, news[0]!];
    if (o.name !== n.name) collector.add('message-renamed', n.name, `${o.name} → ${n.name}`, { location: where(n, ['name']) });
    compareMessagePair(collector, o, n);
    compared.push({ old: o.name, new: n.name });
    return report(collector, compared);
  }
  const newByName = new Map(news.map((n) => [n.name, n]));
  const oldByName = new Map(olds.map((o) => [o.name, o]));
  const pairs: [MessageLayout, MessageLayout][] = [];
  const unmatchedOld: MessageLayout[] = [];
  for (const o of olds) {
    const n = newByName.get(o.name);
    if (n !== undefined) pairs.push([o, n]);
    else unmatchedOld.push(o);
  }
  const unmatchedNew = new Set(news.filter((n) => !oldByName.has(n.name)));
  const stillOld: MessageLayout[] = [];
  for (const o of unmatchedOld) {
    const candidates = [...unmatchedNew].filter((n) => FAMILIES[o.type] !== undefined && n.type === o.type && n.apiKey === o.apiKey);
    if (!o.validVersions.empty && candidates.length === 1) {
      const n = candidates[0]!;
      unmatchedNew.delete(n);
      collector.add('message-renamed', n.name, `${o.name} → ${n.name} (same ${o.type}, apiKey ${o.apiKey})`, { location: where(n, ['name']) });
      pairs.push([o, n]);
    } else {
      stillOld.push(o);
    }
  }
  for (const o of stillOld) {
    if (o.validVersions.empty && o.apiKey === undefined) {
      collector.add('empty-message-removed', o.name, `removed; it had no versions and no apiKey`, { location: o.file });
      continue;
    }
    const what = o.validVersions.empty
      ? `removed; it had no versions but reserved ${o.type} apiKey ${o.apiKey}`
      : `removed (${o.type}${o.apiKey === undefined ? '' : `, apiKey ${o.apiKey}`}, versions ${o.validVersions})`;
    collector.add('message-removed', o.name, what, { location: o.file });
  }
  for (const n of unmatchedNew) {
    const owner = n.apiKey === undefined || FAMILIES[n.type] === undefined ? undefined : olds.find((o) => o.type === n.type && o.apiKey === n.apiKey);
    if (owner !== undefined) {
      collector.add(
        'api-key-reused',
        n.name,
        `${n.type} apiKey ${n.apiKey} belongs to ${owner.name}${owner.validVersions.empty ? ' (an API removed earlier: its key stays reserved)' : ''}`,
        {
          location: where(n, ['apiKey']),
        },
      );
    } else {
      collector.add('message-added', n.name, `new ${n.type}${n.apiKey === undefined ? '' : ` (apiKey ${n.apiKey})`}, versions ${n.validVersions}`, {
        location: n.file,
      });
    }
  }
  for (const [o, n] of pairs) {
    compareMessagePair(collector, o, n);
    compared.push({ old: o.name, new: n.name });
  }
  checkPairing(collector, olds, news);
  return report(collector, compared);
}

/** A request and its response must keep declaring the same validVersions and flexibleVersions. */
function checkPairing(collector: Collector, olds: readonly MessageLayout[], news: readonly MessageLayout[]): void {
  const oldSides = pairByApiKey(olds);
  for (const [key, { request, response }] of pairByApiKey(news)) {
    if (request === undefined || response === undefined) continue;
    const before = oldSides.get(key);
    for (const attribute of ['validVersions', 'flexibleVersions'] as const) {
      const [rq, rs] = [request[attribute], response[attribute]];
      if (rq.equals(rs)) continue;
      const wasSame = before?.request !== undefined && before.response !== undefined && before.request[attribute].equals(before.response[attribute]);
      const wasSameMismatch = before?.request?.[attribute].equals(rq) && before.response?.[attribute].equals(rs);
      if (!wasSame && wasSameMismatch) continue; // an existing mismatch, not a change
      collector.add('api-pairing', request.name, `apiKey ${key}: ${request.name} has ${attribute} ${rq}, but ${response.name} has ${rs}`, {
        location: where(request, [attribute]),
      });
    }
  }
}

// ---------------------------------------------------------------- one message, evolution

/** Compares one message's OLD and NEW layouts (already paired). */
export function compareMessages(o: MessageLayout, n: MessageLayout): DiffReport {
  const collector = new Collector();
  compareMessagePair(collector, o, n);
  return report(collector, [{ old: o.name, new: n.name }]);
}

function compareMessagePair(collector: Collector, o: MessageLayout, n: MessageLayout): void {
  const name = n.name;
  const at = (path: JsonPath): string | undefined => where(n, path);
  if (o.apiKey !== n.apiKey) collector.add('api-key-changed', name, `apiKey ${o.apiKey ?? 'none'} → ${n.apiKey ?? 'none'}`, { location: at(['apiKey']) });
  if (o.type !== n.type) collector.add('type-changed', name, `type ${o.type} → ${n.type}`, { location: at(['type']) });

  // Versions.
  const [ov, nv] = [o.validVersions, n.validVersions];
  if (!ov.equals(nv)) {
    const vAt = at(['validVersions']);
    if (ov.empty) {
      collector.add('version-added-below-lowest', name, `validVersions none → ${nv}: a removed API cannot come back (its apiKey stays reserved)`, {
        location: vAt,
      });
    } else if (nv.empty) {
      if (o.deprecatedVersions.covers(ov)) {
        collector.add('deprecated-version-removed', name, `validVersions ${ov} → none; all were deprecated (${o.deprecatedVersions})`, {
          versions: ov,
          location: vAt,
        });
      } else {
        collector.add('version-removed', name, `validVersions ${ov} → none, but deprecatedVersions was ${o.deprecatedVersions}`, {
          versions: ov,
          location: vAt,
        });
      }
    } else {
      if (nv.highest < ov.highest) {
        const gone = range(Math.max(nv.highest + 1, ov.lowest), ov.highest);
        collector.add('version-removed', name, `validVersions ${ov} → ${nv}: the highest version${gone.length > 1 ? 's' : ''} cannot be removed`, {
          versions: gone,
          location: vAt,
        });
      }
      if (nv.lowest > ov.lowest) {
        const gone = range(ov.lowest, Math.min(nv.lowest - 1, ov.highest));
        const undeclared = gone.filter((v) => !o.deprecatedVersions.contains(v));
        if (undeclared.length === 0) {
          collector.add('deprecated-version-removed', name, `validVersions ${ov} → ${nv} (deprecatedVersions ${o.deprecatedVersions})`, {
            versions: gone,
            location: vAt,
          });
        } else {
          collector.add('version-removed', name, `validVersions ${ov} → ${nv}, but deprecatedVersions was ${o.deprecatedVersions}`, {
            versions: undeclared,
            location: vAt,
          });
        }
      }
      if (nv.lowest < ov.lowest) {
        collector.add('version-added-below-lowest', name, `validVersions ${ov} → ${nv}`, {
          versions: range(nv.lowest, Math.min(ov.lowest - 1, nv.highest)),
          location: vAt,
        });
      }
      if (nv.highest > ov.highest) {
        collector.add('version-added', name, `validVersions ${ov} → ${nv}`, {
          versions: range(Math.max(ov.highest + 1, nv.lowest), nv.highest),
          location: vAt,
        });
      }
    }
  }
  if (!o.deprecatedVersions.equals(n.deprecatedVersions)) {
    collector.add('deprecated-versions-changed', name, `deprecatedVersions ${o.deprecatedVersions} → ${n.deprecatedVersions}`, {
      location: at(['deprecatedVersions']),
    });
  }
  if (o.latestVersionUnstable !== n.latestVersionUnstable) {
    collector.add('unstable-changed', name, `latestVersionUnstable ${o.latestVersionUnstable} → ${n.latestVersionUnstable}`, {
      location: at(['latestVersionUnstable']),
    });
  }

  // Flexible versions: no released version may change, and (as in Kafka) the range may only grow.
  const common = [...o.versions.keys()].filter((v) => n.versions.has(v));
  const flexMoved = common.filter((v) => o.versions.get(v)!.flexible !== n.versions.get(v)!.flexible);
  if (flexMoved.length > 0 || !n.flexibleVersions.covers(o.flexibleVersions)) {
    const detail =
      flexMoved.length > 0
        ? `flexibleVersions ${o.flexibleVersions} → ${n.flexibleVersions} changes released version${flexMoved.length > 1 ? 's' : ''} ${versionRanges(flexMoved)}`
        : `flexibleVersions ${o.flexibleVersions} → ${n.flexibleVersions}: the new range must include the old one`;
    collector.add(
      'flexible-versions-changed',
      name,
      detail,
      flexMoved.length > 0 ? { versions: flexMoved, location: at(['flexibleVersions']) } : { location: at(['flexibleVersions']) },
    );
  }

  for (const v of common) compareVersion(collector, 'evolution', name, v, o.versions.get(v)!, n.versions.get(v)!);
  checkTagReuse(collector, o, n, new Set(common));
}

function range(from: number, to: number): number[] {
  const out: number[] = [];
  for (let v = from; v <= to; v++) out.push(v);
  return out;
}

// ---------------------------------------------------------------- one version

interface Ctx {
  collector: Collector;
  mode: Mode;
  message: string;
  version: number;
  /** Whether the message-level flexibility of the version is the same on both sides. */
  flexSame: boolean;
}

function compareVersion(collector: Collector, mode: Mode, message: string, version: number, o: VersionLayout, n: VersionLayout): void {
  const ctx: Ctx = { collector, mode, message, version, flexSame: o.flexible === n.flexible };
  if (mode === 'wire' && o.flexible !== n.flexible) {
    emit(ctx, 'flexible-versions-changed', '', `${o.flexible ? 'flexible' : 'not flexible'} → ${n.flexible ? 'flexible' : 'not flexible'}`);
  }
  if (ctx.flexSame && o.header !== n.header) {
    emit(ctx, 'header-version-changed', '', `header version ${o.header ?? 'none'} → ${n.header ?? 'none'}`);
  }
  compareStruct(ctx, '', o, n);
  // Safety net: the bytes differ but no rule said why.
  if (wireSignature(o) !== wireSignature(n) && !collector.brokenVersions.get(message)?.has(version)) {
    emit(ctx, 'layout-changed', '', `wire layout ${wireSignature(o)} → ${wireSignature(n)}`);
  }
}

function emit(ctx: Ctx, rule: RuleId, path: string, detail: string, field?: FieldLayout): void {
  ctx.collector.add(rule, ctx.message, detail, { version: ctx.version, path, location: field === undefined ? undefined : locationOf(field) });
}

function join(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}

function tagPath(path: string, f: FieldLayout): string {
  return `${join(path, f.name)} (tag ${f.tag})`;
}

function compareStruct(ctx: Ctx, path: string, o: StructLayout, n: StructLayout): void {
  const oTagged = o.tagged ?? [];
  const nTagged = n.tagged ?? [];
  const names = {
    oldRegular: new Set(o.fields.map((f) => f.name)),
    newRegular: new Set(n.fields.map((f) => f.name)),
    oldTagged: new Map(oTagged.map((f) => [f.name, f])),
    newTagged: new Map(nTagged.map((f) => [f.name, f])),
  };
  if (ctx.mode === 'wire') {
    const shared = Math.min(o.fields.length, n.fields.length);
    for (let i = 0; i < shared; i++) compareField(ctx, path, o.fields[i]!, n.fields[i]!, false);
    for (const f of o.fields.slice(shared))
      emit(ctx, 'field-removed', join(path, f.name), `${typeText(f)} field ${f.name} (position ${o.fields.indexOf(f) + 1}) is missing`);
    for (const f of n.fields.slice(shared))
      emit(ctx, 'field-added', join(path, f.name), `extra ${typeText(f)} field ${f.name} at position ${n.fields.indexOf(f) + 1}`, f);
  } else {
    compareRegularByName(ctx, path, o.fields, n.fields, names);
  }
  const oByTag = new Map(oTagged.map((f) => [f.tag!, f]));
  const nByTag = new Map(nTagged.map((f) => [f.tag!, f]));
  // A tagged field that kept its name but not its tag.
  const retagged = new Set<string>();
  if (ctx.mode === 'evolution') {
    for (const [fieldName, of] of names.oldTagged) {
      const nf = names.newTagged.get(fieldName);
      if (nf === undefined || nf.tag === of.tag) continue;
      retagged.add(fieldName);
      emit(ctx, 'tag-changed', join(path, fieldName), `tag ${of.tag} → ${nf.tag}`, nf);
    }
  }
  const tags = [...new Set([...oByTag.keys(), ...nByTag.keys()])].sort((a, b) => a - b);
  for (const tag of tags) {
    const of = oByTag.get(tag);
    const nf = nByTag.get(tag);
    if (of !== undefined && nf !== undefined) {
      const swapped =
        of.name !== nf.name && (names.newTagged.has(of.name) || names.newRegular.has(of.name) || names.oldTagged.has(nf.name) || names.oldRegular.has(nf.name));
      if (ctx.mode === 'evolution' && swapped) {
        emit(ctx, 'tag-reused', tagPath(path, nf), `tag ${tag} carried ${of.name} (${typeText(of)}), now carries ${nf.name} (${typeText(nf)})`, nf);
      } else {
        compareField(ctx, path, of, nf, true);
      }
    } else if (of !== undefined) {
      // A field that moved to another tag or out of the tagged section is reported once, above or with the regular fields.
      if (ctx.mode === 'evolution' && (retagged.has(of.name) || names.newRegular.has(of.name))) continue;
      emit(ctx, 'tagged-field-removed', tagPath(path, of), `tagged ${typeText(of)} field ${of.name} (tag ${of.tag}) removed`);
    } else if (nf !== undefined) {
      if (ctx.mode === 'evolution' && (retagged.has(nf.name) || names.oldRegular.has(nf.name))) continue;
      emit(ctx, 'tagged-field-added', tagPath(path, nf), `tagged ${typeText(nf)} field ${nf.name} (tag ${nf.tag}) added to a released version`, nf);
    }
  }
}

interface Names {
  oldRegular: Set<string>;
  newRegular: Set<string>;
  oldTagged: Map<string, FieldLayout>;
  newTagged: Map<string, FieldLayout>;
}

/**
 * Aligns the regular fields by name (longest common subsequence), then pairs
 * what is left between two anchors by position when the counts agree and none
 * of the names occurs on the other side (renames). Everything else is an
 * addition, a removal, a move, or a field that changed between regular and tagged.
 */
function compareRegularByName(ctx: Ctx, path: string, olds: FieldLayout[], news: FieldLayout[], names: Names): void {
  const ops = align(olds, news);
  for (const op of ops) {
    if (op.kind === 'same') {
      compareField(ctx, path, op.old, op.new, false);
      continue;
    }
    const rename =
      op.olds.length === op.news.length &&
      op.olds.every((f) => !names.newRegular.has(f.name) && !names.newTagged.has(f.name)) &&
      op.news.every((f) => !names.oldRegular.has(f.name) && !names.oldTagged.has(f.name));
    if (rename) {
      op.olds.forEach((f, i) => compareField(ctx, path, f, op.news[i]!, false));
      continue;
    }
    for (const f of op.olds) {
      if (names.newRegular.has(f.name)) {
        const to = news.findIndex((g) => g.name === f.name);
        emit(ctx, 'field-moved', join(path, f.name), `${f.name} moved from position ${olds.indexOf(f) + 1} to ${to + 1}`, news[to]);
      } else if (names.newTagged.has(f.name)) {
        const t = names.newTagged.get(f.name)!;
        emit(ctx, 'tagging-changed', join(path, f.name), `${f.name} became tagged field ${t.tag}`, t);
      } else {
        emit(ctx, 'field-removed', join(path, f.name), `${typeText(f)} field ${f.name} removed from a released version`);
      }
    }
    for (const f of op.news) {
      if (names.oldRegular.has(f.name)) continue; // reported as moved
      if (names.oldTagged.has(f.name)) {
        emit(ctx, 'tagging-changed', join(path, f.name), `${f.name} was tagged field ${names.oldTagged.get(f.name)!.tag}, is now a regular field`, f);
      } else {
        const at = news.indexOf(f);
        const before = at === 0 ? 'first' : `after ${news[at - 1]!.name}`;
        emit(ctx, 'field-added', join(path, f.name), `${typeText(f)} field ${f.name} added to a released version (${before})`, f);
      }
    }
  }
}

type AlignOp = { kind: 'same'; old: FieldLayout; new: FieldLayout } | { kind: 'gap'; olds: FieldLayout[]; news: FieldLayout[] };

function align(olds: FieldLayout[], news: FieldLayout[]): AlignOp[] {
  const m = olds.length;
  const n = news.length;
  const lcs: number[][] = Array.from({ length: m + 1 }, () => new Array<number>(n + 1).fill(0));
  for (let i = m - 1; i >= 0; i--) {
    for (let j = n - 1; j >= 0; j--) {
      lcs[i]![j] = olds[i]!.name === news[j]!.name ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const ops: AlignOp[] = [];
  let gap: { kind: 'gap'; olds: FieldLayout[]; news: FieldLayout[] } | undefined;
  const flush = (): void => {
    if (gap !== undefined && (gap.olds.length > 0 || gap.news.length > 0)) ops.push(gap);
    gap = undefined;
  };
  let i = 0;
  let j = 0;
  while (i < m || j < n) {
    if (i < m && j < n && olds[i]!.name === news[j]!.name) {
      flush();
      ops.push({ kind: 'same', old: olds[i]!, new: news[j]! });
      i++;
      j++;
    } else {
      gap ??= { kind: 'gap', olds: [], news: [] };
      if (j < n && (i >= m || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) gap.news.push(news[j++]!);
      else gap.olds.push(olds[i++]!);
    }
  }
  flush();
  return ops;
}

function compareField(ctx: Ctx, path: string, o: FieldLayout, n: FieldLayout, tagged: boolean): void {
  const p = tagged ? tagPath(path, n) : join(path, n.name);
  if (ctx.mode === 'evolution' && o.name !== n.name) emit(ctx, 'field-renamed', p, `${o.name} → ${n.name}`, n);
  const oStruct = isStruct(o);
  const nStruct = isStruct(n);
  if (oStruct !== nStruct || isArray(o) !== isArray(n) || (!oStruct && o.type !== n.type)) {
    emit(ctx, 'field-type-changed', p, `${o.type} → ${n.type}`, n);
    return;
  }
  if (oStruct && o.type !== n.type && ctx.mode === 'evolution') emit(ctx, 'struct-renamed', p, `struct ${o.type} → ${n.type}`, n);
  if (!!o.nullable !== !!n.nullable) {
    emit(ctx, 'nullability-changed', p, o.nullable ? 'nullable → not nullable (narrowed)' : 'not nullable → nullable (widened)', n);
  }
  if (ctx.flexSame && !!o.compact !== !!n.compact) {
    const plain = n.type;
    emit(ctx, 'encoding-changed', p, o.compact ? `compact ${plain} → classic ${plain}` : `classic ${plain} → compact ${plain}`, n);
  }
  if (o.default !== n.default) emit(ctx, 'default-changed', p, `default ${showDefault(o)} → ${showDefault(n)}`, n);
  if (oStruct) {
    const child = isArray(n) ? `${join(path, n.name)}[]` : join(path, n.name);
    compareStruct(ctx, child, { fields: o.fields!, tagged: o.tagged }, { fields: n.fields!, tagged: n.tagged });
  }
}

/** A field's default as a schema would write it; layouts leave out the type's zero, so it is put back here. */
function showDefault(field: FieldLayout): string {
  const text = field.default ?? (isStruct(field) || isArray(field) ? 'empty' : (ZERO[field.type] ?? ''));
  return field.type === 'string' && field.default !== undefined && field.default !== 'null' ? JSON.stringify(text) : text === '' ? '""' : text;
}

const ZERO: Record<string, string> = {
  bool: 'false',
  int8: '0',
  int16: '0',
  uint16: '0',
  int32: '0',
  uint32: '0',
  int64: '0',
  float64: '0',
  uuid: 'AAAAAAAAAAAAAAAAAAAAAA',
  records: 'null',
  bytes: 'empty',
};

/**
 * A tag number keeps its meaning forever: a NEW version that is not in OLD may
 * not use, in the same struct, a tag that OLD used for another field.
 */
function checkTagReuse(collector: Collector, o: MessageLayout, n: MessageLayout, common: Set<number>): void {
  const collect = (layout: MessageLayout, versions: Iterable<number>): Map<string, { field: FieldLayout; versions: number[] }> => {
    const out = new Map<string, { field: FieldLayout; versions: number[] }>();
    const visit = (path: string, struct: StructLayout, version: number): void => {
      for (const f of struct.tagged ?? []) {
        const key = `${path}#${f.tag}`;
        const entry = out.get(key);
        if (entry === undefined) out.set(key, { field: f, versions: [version] });
        else entry.versions.push(version);
        if (isStruct(f)) visit(isArray(f) ? `${join(path, f.name)}[]` : join(path, f.name), { fields: f.fields!, tagged: f.tagged }, version);
      }
      for (const f of struct.fields)
        if (isStruct(f)) visit(isArray(f) ? `${join(path, f.name)}[]` : join(path, f.name), { fields: f.fields!, tagged: f.tagged }, version);
    };
    for (const v of versions) visit('', layout.versions.get(v)!, v);
    return out;
  };
  const before = collect(o, o.versions.keys());
  const newOnly = [...n.versions.keys()].filter((v) => !common.has(v));
  if (newOnly.length === 0) return;
  const allNewNames = new Set<string>();
  for (const v of n.versions.values()) {
    const names = (path: string, struct: StructLayout): void => {
      for (const f of [...struct.fields, ...(struct.tagged ?? [])]) {
        allNewNames.add(`${path}/${f.name}`);
        if (isStruct(f)) names(isArray(f) ? `${join(path, f.name)}[]` : join(path, f.name), { fields: f.fields!, tagged: f.tagged });
      }
    };
    names('', v);
  }
  for (const [key, { field: nf, versions }] of collect(n, newOnly)) {
    const was = before.get(key);
    if (was === undefined) continue;
    const of = was.field;
    const path = key.slice(0, key.lastIndexOf('#'));
    const sameWire = fieldSignature(of) === fieldSignature(nf);
    const otherField = of.name !== nf.name && allNewNames.has(`${path}/${of.name}`);
    if (sameWire && !otherField) continue;
    collector.add(
      'tag-reused',
      n.name,
      `tag ${nf.tag} was ${of.name} (${typeText(of)}) in version${was.versions.length > 1 ? 's' : ''} ${versionRanges(was.versions)}, is now ${nf.name} (${typeText(nf)})`,
      {
        versions,
        path: tagPath(path, nf),
        location: locationOf(nf),
      },
    );
  }
}

// ---------------------------------------------------------------- wire equality with upstream

/**
 * Checks that every version OURS declares of a spec UPSTREAM also has puts the
 * same bytes on the wire (names and docs may differ). Specs are paired by name,
 * else by type and apiKey.
 */
export function compareWireEqual(upstream: readonly MessageLayout[], ours: readonly MessageLayout[]): WireEqualReport {
  const collector = new Collector();
  const notUpstream: string[] = [];
  const compared: WireEqualReport['compared'] = [];
  const byName = new Map(upstream.map((u) => [u.name, u]));
  for (const n of ours) {
    const u =
      byName.get(n.name) ??
      (FAMILIES[n.type] !== undefined && n.apiKey !== undefined ? upstream.find((x) => x.type === n.type && x.apiKey === n.apiKey) : undefined);
    if (u === undefined) {
      notUpstream.push(n.name);
      continue;
    }
    if (u.apiKey !== n.apiKey)
      collector.add('api-key-changed', n.name, `apiKey: upstream ${u.apiKey ?? 'none'}, ours ${n.apiKey ?? 'none'}`, { location: where(n, ['apiKey']) });
    if (u.type !== n.type) collector.add('type-changed', n.name, `type: upstream ${u.type}, ours ${n.type}`, { location: where(n, ['type']) });
    const versions: number[] = [];
    const extra: number[] = [];
    for (const v of n.versions.keys()) {
      const uv = u.versions.get(v);
      if (uv === undefined) {
        extra.push(v);
        continue;
      }
      versions.push(v);
      compareVersion(collector, 'wire', n.name, v, uv, n.versions.get(v)!);
    }
    if (extra.length > 0) {
      collector.add(
        'version-not-upstream',
        n.name,
        `ours declares version${extra.length > 1 ? 's' : ''} ${versionRanges(extra)}; upstream ${u.name} has ${u.validVersions}`,
        {
          versions: extra,
          location: where(n, ['validVersions']),
        },
      );
    }
    compared.push({ name: n.name, upstream: u.name, versions: versionRanges(versions) || 'none' });
  }
  return { changes: collector.changes(), notUpstream, compared };
}

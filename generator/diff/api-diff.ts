import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { Node, Project, ts, type SourceFile } from 'ts-morph';
import type { Severity } from './rules.js';

/**
 * Compares the exported TypeScript surface of two generated trees: what
 * breaks code that imports the generated codecs, as opposed to what breaks a
 * peer on the wire. Works on the declarations as written (no type resolution),
 * which is exact for generated code: the same schema always prints the same types.
 */

export type ApiRule =
  | 'module-removed'
  | 'module-added'
  | 'export-removed'
  | 'export-renamed'
  | 'export-added'
  | 'export-kind-changed'
  | 'property-removed'
  | 'property-renamed'
  | 'property-type-changed'
  | 'property-required-added'
  | 'property-optional-added'
  | 'property-became-required'
  | 'property-became-optional'
  | 'property-readonly-changed'
  | 'heritage-changed'
  | 'type-changed'
  | 'signature-changed'
  | 'parameter-added'
  | 'member-removed'
  | 'member-added';

export interface ApiChange {
  /**
   * `note`: breaks only code that builds object literals of the full message
   * type; `create()` callers are unaffected (a new required property that the
   * message's create() input takes as optional and fills with its default).
   */
  severity: Severity | 'note';
  rule: ApiRule;
  /** Module file inside the tree, e.g. `EndTxnRequest.ts`. */
  module: string;
  /** Exported symbol, with a member when it is about one: `EndTxnRequest.transactionalId`. */
  symbol: string;
  detail: string;
}

export interface ApiReport {
  changes: ApiChange[];
  breaking: number;
  compatible: number;
  notes: number;
  modules: { old: number; new: number };
}

type Declaration =
  | { kind: 'interface'; members: Map<string, Member>; heritage: string; order: string }
  | { kind: 'type'; text: string }
  | { kind: 'function'; params: Param[]; returns: string; typeParams: string }
  | { kind: 'const'; summary: string; members: Set<string> | undefined }
  | { kind: 'class' | 'enum'; members: Set<string>; text: string }
  | { kind: 're-export'; from: string };

interface Member {
  type: string;
  optional: boolean;
  readonly: boolean;
}

interface Param {
  name: string;
  type: string;
  optional: boolean;
}

/** Reads every .ts file under a folder (recursively) as name → text. */
export function readTree(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (d: string): void => {
    for (const entry of readdirSync(d).sort()) {
      const path = join(d, entry);
      if (statSync(path).isDirectory()) {
        if (entry !== 'node_modules') walk(path);
      } else if (entry.endsWith('.ts') && !entry.endsWith('.d.ts.map')) {
        files.set(relative(dir, path).split(sep).join('/'), readFileSync(path, 'utf8'));
      }
    }
  };
  walk(dir);
  return files;
}

/** Compares two generated trees (module path → source text). */
export function diffApi(oldFiles: ReadonlyMap<string, string>, newFiles: ReadonlyMap<string, string>): ApiReport {
  const project = new Project({
    useInMemoryFileSystem: true,
    skipAddingFilesFromTsConfig: true,
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext },
  });
  const surfaceOf = (files: ReadonlyMap<string, string>, root: string): Map<string, Map<string, Declaration>> => {
    const out = new Map<string, Map<string, Declaration>>();
    for (const [name, text] of files) {
      const source = project.createSourceFile(`/${root}/${name}`, text, { overwrite: true });
      out.set(name, surface(source));
    }
    return out;
  };
  const before = surfaceOf(oldFiles, 'old');
  const after = surfaceOf(newFiles, 'new');
  const changes: ApiChange[] = [];
  const add = (severity: Severity, rule: ApiRule, module: string, symbol: string, detail: string): void => {
    changes.push({ severity, rule, module, symbol, detail });
  };

  for (const [module, oldDecls] of before) {
    const newDecls = after.get(module);
    if (newDecls === undefined) {
      const exported = [...new Set([...oldDecls.keys()].map(symbolName))];
      add('breaking', 'module-removed', module, module.replace(/\.ts$/, ''), `module removed with its exports ${exported.join(', ')}`);
      continue;
    }
    const removed = [...oldDecls.keys()].filter((k) => !newDecls.has(k));
    const added = new Set([...newDecls.keys()].filter((k) => !oldDecls.has(k)));
    for (const key of removed) {
      const decl = oldDecls.get(key)!;
      const sameName = [...added].find((k) => symbolName(k) === symbolName(key));
      if (sameName !== undefined) {
        added.delete(sameName);
        add('breaking', 'export-kind-changed', module, symbolName(key), `${decl.kind} → ${newDecls.get(sameName)!.kind}`);
        continue;
      }
      const renamed = [...added].find((k) => k.split(':')[0] === key.split(':')[0] && fingerprint(newDecls.get(k)!) === fingerprint(decl));
      if (renamed !== undefined) {
        added.delete(renamed);
        add('breaking', 'export-renamed', module, symbolName(key), `${decl.kind} ${symbolName(key)} renamed to ${symbolName(renamed)}`);
        continue;
      }
      const what = decl.kind === 're-export' ? `export ${symbolName(key)} (re-exported from ${decl.from})` : `exported ${decl.kind} ${symbolName(key)}`;
      add('breaking', 'export-removed', module, symbolName(key), `${what} removed`);
    }
    for (const key of added) {
      const decl = newDecls.get(key)!;
      const what = decl.kind === 're-export' ? `export ${symbolName(key)} (re-exported from ${decl.from})` : `exported ${decl.kind} ${symbolName(key)}`;
      add('compatible', 'export-added', module, symbolName(key), `new ${what}`);
    }
    for (const [key, o] of oldDecls) {
      const n = newDecls.get(key);
      if (n !== undefined) compareDeclaration(add, module, symbolName(key), o, n);
    }
  }
  for (const [module, decls] of after) {
    if (before.has(module)) continue;
    const exported = [...new Set([...decls.keys()].map(symbolName))];
    add('compatible', 'module-added', module, module.replace(/\.ts$/, ''), `new module exporting ${exported.join(', ')}`);
  }
  for (const change of changes) {
    if (change.rule === 'property-required-added' && filledByCreate(after.get(change.module), change.symbol)) {
      const [type, property] = change.symbol.split('.') as [string, string];
      change.severity = 'note';
      change.detail = `${change.detail.replace(/ \(object literals of .*\)$/, '')}: create${type}() fills it with its default, so its callers are unaffected; object literals typed as the full ${type} must now set it (${property})`;
    }
  }
  const rank = { breaking: 0, note: 1, compatible: 2 } as const;
  changes.sort((a, b) => cmp(a.module, b.module) || rank[a.severity] - rank[b.severity] || cmp(a.symbol, b.symbol) || cmp(a.rule, b.rule));
  return {
    changes,
    breaking: changes.filter((c) => c.severity === 'breaking').length,
    compatible: changes.filter((c) => c.severity === 'compatible').length,
    notes: changes.filter((c) => c.severity === 'note').length,
    modules: { old: before.size, new: after.size },
  };
}

/**
 * Whether a property `Type.property` is one that create<Type>() fills: the
 * module declares `Type`'s create input (`TypeInit`, as kipgen's generator
 * emits it) with the property optional.
 */
function filledByCreate(module: Map<string, Declaration> | undefined, symbol: string): boolean {
  const [type, property] = symbol.split('.');
  if (type === undefined || property === undefined) return false;
  const init = module?.get(`interface:${type}Init`);
  const function_ = module?.get(`function:create${type}`);
  return init?.kind === 'interface' && init.members.get(property)?.optional === true && function_?.kind === 'function';
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Declarations are keyed `kind:name`: an interface and a const may share a name (a codec and its message type). */
function symbolName(key: string): string {
  return key.slice(key.indexOf(':') + 1);
}

function fingerprint(decl: Declaration): string {
  return JSON.stringify(decl, (_k, v: unknown) => (v instanceof Map ? [...v] : v instanceof Set ? [...v] : v));
}

type Add = (severity: Severity, rule: ApiRule, module: string, symbol: string, detail: string) => void;

function compareDeclaration(add: Add, module: string, name: string, o: Declaration, n: Declaration): void {
  if (o.kind === 'interface' && n.kind === 'interface') {
    if (o.heritage !== n.heritage) add('breaking', 'heritage-changed', module, name, `extends ${o.heritage || '(nothing)'} → ${n.heritage || '(nothing)'}`);
    const removed = [...o.members.keys()].filter((m) => !n.members.has(m));
    const added = [...n.members.keys()].filter((m) => !o.members.has(m));
    const renamedTo = new Map<string, string>();
    // One property gone and one of the same type added in its place reads as a rename.
    if (removed.length === 1 && added.length === 1 && o.members.get(removed[0]!)!.type === n.members.get(added[0]!)!.type) {
      renamedTo.set(removed[0]!, added[0]!);
    }
    for (const m of removed) {
      const to = renamedTo.get(m);
      if (to !== undefined) add('breaking', 'property-renamed', module, `${name}.${m}`, `property ${m} renamed to ${to}`);
      else add('breaking', 'property-removed', module, `${name}.${m}`, `property ${m}: ${o.members.get(m)!.type} removed`);
    }
    for (const m of added) {
      if ([...renamedTo.values()].includes(m)) continue;
      const member = n.members.get(m)!;
      if (member.optional) add('compatible', 'property-optional-added', module, `${name}.${m}`, `new optional property ${m}?: ${member.type}`);
      else
        add(
          'breaking',
          'property-required-added',
          module,
          `${name}.${m}`,
          `new required property ${m}: ${member.type} (object literals of ${name} must now set it)`,
        );
    }
    for (const [m, om] of o.members) {
      const nm = n.members.get(m);
      if (nm === undefined) continue;
      if (om.type !== nm.type) add('breaking', 'property-type-changed', module, `${name}.${m}`, `${om.type} → ${nm.type}`);
      if (om.optional && !nm.optional) add('breaking', 'property-became-required', module, `${name}.${m}`, `${m}?: → ${m}: (writers must now set it)`);
      if (!om.optional && nm.optional)
        add('breaking', 'property-became-optional', module, `${name}.${m}`, `${m}: → ${m}?: (readers must now handle undefined)`);
      if (om.readonly !== nm.readonly)
        add(
          nm.readonly ? 'breaking' : 'compatible',
          'property-readonly-changed',
          module,
          `${name}.${m}`,
          nm.readonly ? 'became readonly' : 'no longer readonly',
        );
    }
    return;
  }
  if (o.kind === 'type' && n.kind === 'type') {
    if (o.text !== n.text) add('breaking', 'type-changed', module, name, `${o.text} → ${n.text}`);
    return;
  }
  if (o.kind === 'function' && n.kind === 'function') {
    if (o.returns !== n.returns || o.typeParams !== n.typeParams) add('breaking', 'signature-changed', module, name, `${signature(o)} → ${signature(n)}`);
    for (let i = 0; i < Math.max(o.params.length, n.params.length); i++) {
      const [op, np] = [o.params[i], n.params[i]];
      if (op === undefined && np !== undefined) {
        if (np.optional) continue;
        add('breaking', 'parameter-added', module, name, `new required parameter ${np.name}: ${np.type}`);
      } else if (op !== undefined && np === undefined) {
        add('breaking', 'signature-changed', module, name, `parameter ${op.name} removed`);
      } else if (op !== undefined && np !== undefined && (op.type !== np.type || (op.optional && !np.optional))) {
        add('breaking', 'signature-changed', module, name, `parameter ${i + 1}: ${paramText(op)} → ${paramText(np)}`);
      }
    }
    return;
  }
  if (o.kind === 'const' && n.kind === 'const') {
    if (o.summary !== n.summary) add('breaking', 'type-changed', module, name, `${o.summary} → ${n.summary}`);
    compareMembers(add, module, name, o.members, n.members);
    return;
  }
  if ((o.kind === 'class' || o.kind === 'enum') && o.kind === n.kind) {
    compareMembers(add, module, name, o.members, n.members);
    return;
  }
  if (o.kind === 're-export' && n.kind === 're-export' && o.from !== n.from) {
    add('compatible', 'type-changed', module, name, `re-exported from ${o.from} → ${n.from}`);
  }
}

function compareMembers(add: Add, module: string, name: string, o: Set<string> | undefined, n: Set<string> | undefined): void {
  if (o === undefined || n === undefined) return;
  for (const m of o) if (!n.has(m)) add('breaking', 'member-removed', module, `${name}[${m}]`, `entry ${m} removed`);
  for (const m of n) if (!o.has(m)) add('compatible', 'member-added', module, `${name}[${m}]`, `new entry ${m}`);
}

function signature(f: Extract<Declaration, { kind: 'function' }>): string {
  return `${f.typeParams}(${f.params.map(paramText).join(', ')}): ${f.returns}`;
}

function paramText(p: Param): string {
  return `${p.name}${p.optional ? '?' : ''}: ${p.type}`;
}

function clean(text: string | undefined): string {
  return (text ?? '')
    .replace(/\s+/g, ' ')
    .replace(/;\s*}/g, ' }')
    .replace(/,\s*([\])}])/g, '$1')
    .trim();
}

/** The exported declarations of one module, keyed `kind:name`. */
function surface(source: SourceFile): Map<string, Declaration> {
  const out = new Map<string, Declaration>();
  for (const i of source.getInterfaces()) {
    if (!i.isExported()) continue;
    const members = new Map<string, Member>();
    for (const p of i.getProperties()) {
      members.set(p.getName(), { type: clean(p.getTypeNode()?.getText() ?? 'any'), optional: p.hasQuestionToken(), readonly: p.isReadonly() });
    }
    for (const m of i.getMethods()) {
      members.set(`${m.getName()}()`, { type: clean(m.getText().slice(m.getName().length)), optional: m.hasQuestionToken(), readonly: false });
    }
    for (const s of i.getIndexSignatures()) members.set('[index]', { type: clean(s.getText()), optional: false, readonly: s.isReadonly() });
    const heritage = clean(
      i
        .getExtends()
        .map((e) => e.getText())
        .join(', '),
    );
    out.set(`interface:${i.getName()}`, { kind: 'interface', members, heritage, order: [...members.keys()].join(',') });
  }
  for (const t of source.getTypeAliases()) {
    if (t.isExported()) out.set(`type:${t.getName()}`, { kind: 'type', text: clean(t.getTypeNode()?.getText()) });
  }
  for (const f of source.getFunctions()) {
    if (!f.isExported() || f.getName() === undefined) continue;
    out.set(`function:${f.getName()!}`, {
      kind: 'function',
      typeParams: clean(
        f.getTypeParameters().length
          ? `<${f
              .getTypeParameters()
              .map((p) => p.getText())
              .join(', ')}>`
          : '',
      ),
      params: f.getParameters().map((p) => ({ name: p.getName(), type: clean(p.getTypeNode()?.getText() ?? 'any'), optional: p.isOptional() })),
      returns: clean(f.getReturnTypeNode()?.getText() ?? 'inferred'),
    });
  }
  for (const statement of source.getVariableStatements()) {
    if (!statement.isExported()) continue;
    for (const d of statement.getDeclarations()) out.set(`const:${d.getName()}`, constDeclaration(d.getTypeNode()?.getText(), d.getInitializer()));
  }
  for (const c of source.getClasses()) {
    if (!c.isExported() || c.getName() === undefined) continue;
    out.set(`class:${c.getName()!}`, { kind: 'class', members: new Set(c.getMembers().map((m) => clean(m.getText()))), text: '' });
  }
  for (const e of source.getEnums()) {
    if (e.isExported()) out.set(`enum:${e.getName()}`, { kind: 'enum', members: new Set(e.getMembers().map((m) => clean(m.getText()))), text: '' });
  }
  for (const ex of source.getExportDeclarations()) {
    const from = ex.getModuleSpecifierValue() ?? '(local)';
    for (const spec of ex.getNamedExports()) {
      const name = spec.getAliasNode()?.getText() ?? spec.getName();
      out.set(`re-export:${name}`, { kind: 're-export', from });
    }
    if (ex.isNamespaceExport() && !ex.hasNamedExports()) out.set(`re-export:* from ${from}`, { kind: 're-export', from });
  }
  return out;
}

/** A const by its annotation, or what its initializer builds and, for registries and codecs, the keys it holds. */
function constDeclaration(typeText: string | undefined, init: Node | undefined): Declaration {
  let members: Set<string> | undefined;
  let summary = typeText === undefined ? '' : clean(typeText);
  if (init !== undefined) {
    let object: Node | undefined;
    if (Node.isObjectLiteralExpression(init)) object = init;
    else if (Node.isCallExpression(init)) {
      const typeArgs = init.getTypeArguments().map((t) => clean(t.getText()));
      if (summary === '') summary = `${clean(init.getExpression().getText())}${typeArgs.length ? `<${typeArgs.join(', ')}>` : ''}(…)`;
      object = init.getArguments()[0];
    } else if (Node.isNewExpression(init)) {
      const first = init.getArguments()[0];
      if (first !== undefined && Node.isArrayLiteralExpression(first)) {
        members = new Set(first.getElements().map((e) => (Node.isArrayLiteralExpression(e) ? clean(e.getElements()[0]?.getText()) : clean(e.getText()))));
      }
      if (summary === '') summary = `new ${clean(init.getExpression().getText())}(…)`;
    } else if (summary === '') {
      summary = init.getKindName();
    }
    if (object !== undefined && Node.isObjectLiteralExpression(object)) {
      members = new Set(
        object
          .getProperties()
          .map((p) =>
            Node.isPropertyAssignment(p) || Node.isShorthandPropertyAssignment(p) || Node.isMethodDeclaration(p) ? p.getName() : clean(p.getText()),
          ),
      );
    }
  }
  return { kind: 'const', summary, members };
}

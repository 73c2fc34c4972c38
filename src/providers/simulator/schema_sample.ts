/**
 * Values that satisfy a JSON schema, for the simulator's tool-call arguments and JSON replies:
 * every property of the declared type, within its enum, bounds, length, format and pattern. A
 * value the caller wrote as `name=value` or `name: value` in the text is used when it fits.
 *
 * Every piece of work has a budget fixed before it starts ({@link LIMITS}): a schema that needs
 * more is answered with a 400 naming its place in the request. A caller's `pattern` is read to
 * build a matching string, never run.
 */
import { ApiError, invalidRequest } from "../../errors.ts";

type Schema = Record<string, unknown>;

/** What the samples of one reply may cost. Optional content (properties not required, array
 * items beyond the minimum) is only made within the first half of the `nodes`, `chars` and
 * `work` budgets, so the content a schema requires always has (about) the other half. */
const LIMITS = {
  /** Nesting steps (properties, items, combinators); deeper objects and arrays come out empty,
   * which is where a required recursive chain is cut. */
  depth: 64,
  /** Values produced. */
  nodes: 10_000,
  /** Characters of JSON produced. */
  chars: 256 * 1024,
  /** Schema entries looked at (keywords, properties, branches, enum values, pattern text). */
  work: 1_000_000,
  /** Work charged for optional content (or an `anyOf` branch) that did not fit, so that at
   * most about five hundred such attempts are made. */
  failure: 1_000,
  /** Items of one array (`minItems`, `prefixItems` with `minContains`). */
  items: 1_000,
  /** Properties of one object (`required`, `minProperties`). */
  properties: 1_000,
  /** Characters of one string (`minLength`, the string a `pattern` needs). */
  length: 10_000,
  /** `anyOf`/`oneOf` branches tried. */
  branches: 16,
  /** `$ref`s followed one after another. */
  refHops: 8,
  /** Groups nested in a `pattern`. */
  patternDepth: 32,
  /** Characters of a property name in an error's param, and of the whole param. */
  quote: 100,
  param: 300,
} as const;

const FORMATS = new Map([
  ["date", "2025-01-01"],
  ["date-time", "2025-01-01T12:00:00Z"],
  ["time", "12:00:00"],
  ["email", "user@example.com"],
  ["uri", "https://example.com/"],
  ["url", "https://example.com/"],
  ["uuid", "00000000-0000-4000-8000-000000000000"],
  ["hostname", "example.com"],
  ["ipv4", "192.0.2.1"],
  ["ipv6", "2001:db8::1"],
]);

/** Samples the schemas of one reply: the caller's `name=value` hints read once, one budget
 * shared by all the samples. */
export class SchemaSampler {
  readonly #hints: Map<string, string>;
  readonly #budget = new Budget();

  /** `text` is the caller's message. */
  constructor(text: string) {
    this.#hints = parseHints(text);
  }

  /** Arguments for a function whose `parameters` schema is at `path` in the request (`{}` for
   * none); a 400 when they cost more than the budget. */
  sampleArguments(parameters: Schema | undefined, path: string): Record<string, unknown> {
    if (parameters === undefined) return {};
    const value = this.sampleValue(parameters, path);
    return isSchema(value) ? value : {};
  }

  /** A value valid against `schema`, which is at `path` in the request; a 400 when it costs
   * more than the budget. */
  sampleValue(schema: Schema, path: string): unknown {
    const root: Node = { schema, path };
    return sample(root, new Run(root, this.#budget, this.#hints), "", 0);
  }
}

/** A schema and where it is in the request (`tools[0].function.parameters.properties.a`). A
 * schema merged from `allOf` parts knows where its keywords and properties came from. */
interface Node<S = unknown> {
  schema: S;
  path: string;
  origins?: Map<string, string>;
}

/** Counts what one reply's samples produce and look at, against {@link LIMITS}. */
class Budget {
  #nodes = 0;
  #chars = 0;
  #work = 0;
  #optional = false;
  readonly #sizes = new Map<unknown, number>();

  /** Looks at `n` schema entries of the schema at `param`; refused (a 400) before it starts
   * when it would go over the budget. */
  work(n: number, param: string): void {
    if (this.#work + n > this.#cap(LIMITS.work)) throw overBudget(param, LIMITS.work, "steps");
    this.#work += n;
  }

  /** The length of `value` as JSON (`Infinity` when it cannot be written), measured once per
   * object. */
  size(value: unknown): number {
    if (typeof value !== "object" || value === null) return jsonLength(value);
    let size = this.#sizes.get(value);
    if (size === undefined) this.#sizes.set(value, size = jsonLength(value));
    return size;
  }

  /** Produces `nodes` values and `chars` characters of JSON for the schema at `param`. */
  produce(nodes: number, chars: number, param: string): void {
    this.#nodes += nodes;
    this.#chars += chars;
    if (this.#nodes > this.#cap(LIMITS.nodes)) throw overBudget(param, LIMITS.nodes, "values");
    if (this.#chars > this.#cap(LIMITS.chars)) {
      throw overBudget(param, LIMITS.chars, "characters of JSON");
    }
  }

  /** What `make` returns as optional content, or `undefined` when it does not fit in the first
   * half of the budget; the values and characters it produced are then given back (the work it
   * did stays spent, plus {@link LIMITS.failure}). */
  optional<T>(make: () => T): T | undefined {
    const room = this.#nodes < LIMITS.nodes / 2 && this.#chars < LIMITS.chars / 2 &&
      this.#work < LIMITS.work / 2;
    if (!room) return undefined;
    const nodes = this.#nodes;
    const chars = this.#chars;
    const outer = this.#optional;
    this.#optional = true;
    try {
      return make();
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      this.#nodes = nodes;
      this.#chars = chars;
      this.#work += LIMITS.failure;
      return undefined;
    } finally {
      this.#optional = outer;
    }
  }

  #cap(limit: number): number {
    return this.#optional ? limit / 2 : limit;
  }
}

/** One sample: its root (for `$ref`s), the schemas being sampled (to see recursion), the shared
 * budget and hints. */
class Run {
  readonly #refs = new Map<string, Node | undefined>();
  readonly #patterns = new Map<string, string | undefined>();
  readonly #open: unknown[] = [];

  constructor(
    readonly root: Node,
    readonly budget: Budget,
    readonly hints: Map<string, string>,
  ) {}

  /** The schema `node` stands for, after its `$ref`s; `{}` for one that does not resolve. */
  resolve(node: Node): Node {
    for (let hops = 0; isSchema(node.schema) && typeof node.schema.$ref === "string"; hops++) {
      const ref = node.schema.$ref;
      const target = hops < LIMITS.refHops ? this.#target(ref, node.path) : undefined;
      if (target === undefined) return { schema: {}, path: node.path };
      node = target;
    }
    return node;
  }

  /** Whether `node` is a `$ref` back to a schema being sampled. */
  recursive(node: Node): boolean {
    return isSchema(node.schema) && typeof node.schema.$ref === "string" &&
      this.#open.includes(this.resolve(node).schema);
  }

  /** What `make` returns, with `schema` marked as being sampled meanwhile. */
  within<T>(schema: unknown, make: () => T): T {
    this.#open.push(schema);
    try {
      return make();
    } finally {
      this.#open.pop();
    }
  }

  /** The string for `pattern` (at `param`), read once per sample. */
  pattern(pattern: string, param: string): string | undefined {
    if (!this.#patterns.has(pattern)) {
      this.#patterns.set(pattern, patternString(pattern, param, this.budget));
    }
    return this.#patterns.get(pattern);
  }

  #target(ref: string, param: string): Node | undefined {
    if (!this.#refs.has(ref)) {
      this.budget.work(ref.length, param);
      this.#refs.set(ref, pointer(this.root, ref));
    }
    return this.#refs.get(ref);
  }
}

function sample(at: Node, run: Run, name: string, depth: number): unknown {
  run.budget.work(1, at.path);
  const node = run.resolve(at);
  if (!isSchemaNode(node)) return leaf(null, node, run);
  return run.within(node.schema, () => sampleSchema(node, run, name, depth));
}

function sampleSchema(node: Node<Schema>, run: Run, name: string, depth: number): unknown {
  const schema = node.schema;
  if ("const" in schema) return leaf(schema.const, node, run);
  const hint = name === "" ? undefined : run.hints.get(name);
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    return leaf(enumValue(node, schema.enum, hint, run), node, run);
  }
  const deep = depth >= LIMITS.depth;
  if (!deep) {
    for (const key of ["anyOf", "oneOf"] as const) {
      const branches = schema[key];
      if (Array.isArray(branches) && branches.length > 0) {
        return sampleBranch(node, key, branches, run, name, depth);
      }
    }
    if (Array.isArray(schema.allOf)) return sample(mergeAll(node, run), run, name, depth + 1);
  }
  if ("default" in schema && hint === undefined) return leaf(schema.default, node, run);
  switch (typeOf(node, run)) {
    case "object":
      return deep ? empty({}, node, run) : sampleObject(node, run, depth);
    case "array":
      return deep ? empty([], node, run) : sampleArray(node, run, name, depth);
    case "integer":
      return leaf(sampleNumber(schema, true, hint), node, run);
    case "number":
      return leaf(sampleNumber(schema, false, hint), node, run);
    case "boolean":
      return leaf(hint !== "false", node, run);
    case "null":
      return leaf(null, node, run);
    default:
      return leaf(sampleString(node, run, hint), node, run);
  }
}

/** A value for an `anyOf`/`oneOf`: of its first {@link LIMITS.branches} branches, those that do
 * not lead back into the schema first, then `null` types, then the rest, the first that fits as
 * optional content; else, with the whole budget, a `null` one or the first. */
function sampleBranch(
  node: Node<Schema>,
  key: string,
  branches: unknown[],
  run: Run,
  name: string,
  depth: number,
): unknown {
  const first = branches.slice(0, LIMITS.branches);
  run.budget.work(first.length, node.path);
  const at = keywordPath(node, key);
  const rank = (branch: Node) => {
    if (run.recursive(branch)) return 2;
    const schema = run.resolve(branch).schema;
    return isSchema(schema) && schema.type === "null" ? 1 : 0;
  };
  const ranked = first
    .map((schema, i) => {
      const branch: Node = { schema, path: `${at}[${i}]` };
      return { branch, rank: rank(branch) };
    })
    .sort((a, b) => a.rank - b.rank);
  for (const { branch } of ranked) {
    const value = run.budget.optional(() => sample(branch, run, name, depth + 1));
    if (value !== undefined) return value;
  }
  const fallback = ranked.find((r) => r.rank === 1) ?? ranked[0]!;
  return sample(fallback.branch, run, name, depth + 1);
}

function typeOf(node: Node<Schema>, run: Run): unknown {
  const { type, properties, items, prefixItems } = node.schema;
  if (typeof type === "string") return type;
  if (Array.isArray(type)) {
    run.budget.work(type.length, node.path);
    return type.find((t) => t !== "null" && typeof t === "string") ?? type[0];
  }
  if (isSchema(properties)) return "object";
  if (items !== undefined || prefixItems !== undefined) return "array";
  return undefined;
}

function enumValue(node: Node, values: unknown[], hint: string | undefined, run: Run): unknown {
  if (hint === undefined) return values[0];
  run.budget.work(values.length, node.path);
  const match = values.find((v) => (typeof v !== "object" || v === null) && String(v) === hint);
  return match !== undefined ? match : values[0];
}

/** The declared properties (optional ones within the budget and not recursive), the required
 * ones, and more from `additionalProperties` up to `minProperties`. */
function sampleObject(node: Node<Schema>, run: Run, depth: number): Record<string, unknown> {
  const { schema } = node;
  const { budget } = run;
  const properties = isSchema(schema.properties) ? schema.properties : {};
  const names = Object.keys(properties);
  budget.work(names.length, node.path);
  const required = requiredNames(node, run);
  const fill = atLeast(node, "minProperties", LIMITS.properties, "properties");
  budget.produce(1, 2, node.path);
  const out = new Map<string, unknown>();
  const put = (key: string, at: Node, optional: boolean) => {
    const make = () => {
      budget.work(key.length, at.path);
      budget.produce(0, jsonLength(key) + 2, at.path);
      return sample(at, run, key, depth + 1);
    };
    const value = optional ? budget.optional(make) : make();
    if (value !== undefined) out.set(key, value);
  };
  for (const key of names) {
    const at: Node = { schema: properties[key], path: propertyPath(node, key) };
    const optional = !required.has(key);
    if (!(optional && run.recursive(at))) put(key, at, optional);
  }
  for (const key of required) {
    if (!out.has(key)) put(key, { schema: {}, path: keywordPath(node, "required") }, false);
  }
  const extra = schema.additionalProperties;
  if (out.size < fill && extra !== false) {
    const at: Node = {
      schema: isSchema(extra) ? extra : {},
      path: keywordPath(node, "additionalProperties"),
    };
    for (let i = 1; out.size < fill; i++) {
      const key = `property${i}`;
      if (!out.has(key) && !Object.hasOwn(properties, key)) put(key, at, false);
    }
  }
  return Object.fromEntries(out);
}

function requiredNames(node: Node<Schema>, run: Run): Set<string> {
  const list = node.schema.required;
  if (!Array.isArray(list)) return new Set();
  run.budget.work(list.length, node.path);
  const names = new Set(list.filter((r): r is string => typeof r === "string"));
  if (names.size > LIMITS.properties) {
    throw overLimit(keywordPath(node, "required"), names.size, "properties", LIMITS.properties);
  }
  return names;
}

/** `minItems` items (and `minContains` of `contains` after the `prefixItems`), then, as
 * optional content, the rest of the `prefixItems` or one item. */
function sampleArray(node: Node<Schema>, run: Run, name: string, depth: number): unknown[] {
  const { schema } = node;
  const { budget } = run;
  const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : [];
  const contains = isSchema(schema.contains) ? schema.contains : undefined;
  const minContains = contains === undefined
    ? 0
    : schema.minContains === undefined
    ? 1
    : atLeast(node, "minContains", LIMITS.items, "items");
  const containsEnd = minContains > 0 ? prefix.length + minContains : 0;
  if (containsEnd > LIMITS.items) {
    throw overLimit(keywordPath(node, "minContains"), containsEnd, "items", LIMITS.items);
  }
  const required = Math.max(atLeast(node, "minItems", LIMITS.items, "items"), containsEnd);
  const max = typeof schema.maxItems === "number" ? schema.maxItems : Infinity;
  const open = schema.items === false ? prefix.length : LIMITS.items;
  const count = Math.max(required, Math.min(Math.max(1, prefix.length), max, open, LIMITS.items));
  budget.produce(1, 2, node.path);
  const out: unknown[] = [];
  for (let i = 0; i < count; i++) {
    const at: Node = i < prefix.length
      ? { schema: prefix[i], path: `${keywordPath(node, "prefixItems")}[${i}]` }
      : i < containsEnd
      ? { schema: contains, path: keywordPath(node, "contains") }
      : { schema: schema.items ?? {}, path: keywordPath(node, "items") };
    const optional = i >= required;
    if (optional && run.recursive(at)) break;
    const make = () => {
      budget.produce(0, 1, at.path);
      const value = sample(at, run, name, depth + 1);
      if (schema.uniqueItems !== true || i === 0) return value;
      const distinct = typeof value === "string"
        ? `${value} ${i + 1}`
        : typeof value === "number"
        ? value + i
        : value;
      budget.produce(0, jsonLength(distinct), at.path);
      return distinct;
    };
    const value = optional ? budget.optional(make) : make();
    if (value === undefined) break;
    out.push(value);
  }
  return out;
}

/** The pattern's string, else the hint (never checked against a pattern), else the format's
 * example, cut to `maxLength` and padded to `minLength` (in code points). */
function sampleString(node: Node<Schema>, run: Run, hint: string | undefined): string {
  const { schema } = node;
  const min = atLeast(node, "minLength", LIMITS.length, "characters");
  const max = typeof schema.maxLength === "number" ? Math.max(0, schema.maxLength) : Infinity;
  const format = typeof schema.format === "string" ? FORMATS.get(schema.format) : undefined;
  const base = typeof schema.pattern === "string"
    ? run.pattern(schema.pattern, keywordPath(node, "pattern"))
    : hint;
  const chars = Array.from(base ?? format ?? "example").slice(0, max);
  return chars.join("") + "x".repeat(Math.max(0, min - chars.length));
}

function sampleNumber(schema: Schema, integer: boolean, hint: string | undefined): number {
  let lo = -Infinity;
  let hi = Infinity;
  let loOpen = schema.exclusiveMinimum === true;
  let hiOpen = schema.exclusiveMaximum === true;
  if (typeof schema.minimum === "number") lo = schema.minimum;
  if (typeof schema.maximum === "number") hi = schema.maximum;
  if (typeof schema.exclusiveMinimum === "number" && schema.exclusiveMinimum >= lo) {
    lo = schema.exclusiveMinimum;
    loOpen = true;
  }
  if (typeof schema.exclusiveMaximum === "number" && schema.exclusiveMaximum <= hi) {
    hi = schema.exclusiveMaximum;
    hiOpen = true;
  }
  const step = typeof schema.multipleOf === "number" && schema.multipleOf > 0
    ? schema.multipleOf
    : 0;
  const fits = (v: number) =>
    Number.isFinite(v) && (loOpen ? v > lo : v >= lo) && (hiOpen ? v < hi : v <= hi) &&
    (!integer || Number.isInteger(v)) &&
    (step === 0 || Math.abs(v / step - Math.round(v / step)) < 1e-9);
  const candidates = [hint === undefined || hint === "" ? NaN : Number(hint), 1, 0];
  if (step > 0 && Number.isFinite(lo)) {
    candidates.push(Math.ceil(lo / step) * step, (Math.ceil(lo / step) + 1) * step);
  }
  if (step > 0 && Number.isFinite(hi)) candidates.push(Math.floor(hi / step) * step);
  candidates.push(lo, Math.ceil(lo), Math.floor(lo) + 1, hi, Math.floor(hi), Math.ceil(hi) - 1);
  if (Number.isFinite(lo) && Number.isFinite(hi)) candidates.push((lo + hi) / 2);
  return candidates.find(fits) ?? (Number.isFinite(lo) ? lo : Number.isFinite(hi) ? hi : 0);
}

/** The schema with its `allOf` parts merged in (the first of each keyword, the properties and
 * `required` of all), each keyword remembering where it came from. */
function mergeAll(node: Node<Schema>, run: Run): Node {
  const merged: Schema = Object.create(null);
  const properties: Schema = Object.create(null);
  const required: unknown[] = [];
  const origins = new Map(node.origins);
  const take = (from: Node, own: boolean) => {
    if (!isSchemaNode(from)) return;
    const keys = Object.keys(from.schema);
    run.budget.work(keys.length, from.path);
    for (const key of keys) {
      const value = from.schema[key];
      if (own && key === "allOf") continue;
      if (key === "properties" && isSchema(value)) {
        const names = Object.keys(value);
        run.budget.work(names.length, from.path);
        for (const name of names) {
          if (Object.hasOwn(properties, name)) continue;
          properties[name] = value[name];
          if (!own) origins.set(`properties/${name}`, propertyPath(from, name));
        }
      } else if (key === "required" && Array.isArray(value)) {
        run.budget.work(value.length, from.path);
        for (const name of value) required.push(name);
      } else if (!(key in merged)) {
        merged[key] = value;
        if (!own) origins.set(key, keywordPath(from, key));
      }
    }
  };
  take(node, true);
  const parts = node.schema.allOf as unknown[];
  run.budget.work(parts.length, node.path);
  const at = keywordPath(node, "allOf");
  parts.forEach((schema, i) => {
    const part: Node = { schema, path: `${at}[${i}]` };
    if (!run.recursive(part)) take(run.resolve(part), false);
  });
  if (Object.keys(properties).length > 0) merged.properties = properties;
  if (required.length > 0) merged.required = required;
  return { schema: merged, path: node.path, origins };
}

/** A leaf value, counted against the budget (a `const`, `enum` or `default` value may be
 * large, so its characters are also work). */
function leaf<T>(value: T, node: Node, run: Run): T {
  const chars = run.budget.size(value);
  run.budget.work(chars, node.path);
  run.budget.produce(1, chars, node.path);
  return value;
}

/** An object or array cut at the depth limit. */
function empty<T>(value: T, node: Node, run: Run): T {
  run.budget.produce(1, 2, node.path);
  return value;
}

/** A count keyword (`minItems`), 0 when absent; a 400 when it is over `cap`. */
function atLeast(node: Node<Schema>, key: string, cap: number, unit: string): number {
  const value = node.schema[key];
  if (typeof value !== "number" || !(value > 0)) return 0;
  if (value > cap) throw overLimit(keywordPath(node, key), value, unit, cap);
  return Math.ceil(value);
}

function overLimit(param: string, asked: number, unit: string, cap: number): ApiError {
  return sampleError(param, `asks for ${asked} ${unit}; the simulator samples at most ${cap}.`);
}

function overBudget(param: string, limit: number, unit: string): ApiError {
  return sampleError(
    param,
    `takes more than ${limit} ${unit} to sample, the simulator's budget for one reply.`,
  );
}

/** The 400 for the schema at `param` (shortened when long: a `$ref` may point deep). */
function sampleError(param: string, why: string): ApiError {
  const at = param.length <= LIMITS.param
    ? param
    : `${param.slice(0, LIMITS.quote)}\u2026${param.slice(-(LIMITS.param - LIMITS.quote))}`;
  return invalidRequest(`\`${at}\` ${why}`, at, "invalid_value");
}

/** Where a keyword of `node` is in the request. */
function keywordPath(node: Node, key: string): string {
  return node.origins?.get(key) ?? `${node.path}.${key}`;
}

/** Where the schema of property `name` of `node` is in the request. */
function propertyPath(node: Node, name: string): string {
  return node.origins?.get(`properties/${name}`) ??
    `${keywordPath(node, "properties")}.${quoted(name)}`;
}

function quoted(name: string): string {
  return name.length > LIMITS.quote ? `${name.slice(0, LIMITS.quote)}\u2026` : name;
}

/** Resolves a local JSON pointer (`#/$defs/x`, `#/anyOf/0`) against the root schema. */
function pointer(root: Node, ref: string): Node | undefined {
  if (ref === "#") return root;
  if (!ref.startsWith("#/")) return undefined;
  let node = root.schema;
  let path = root.path;
  for (const part of ref.slice(2).split("/")) {
    const key = pointerKey(part);
    if (Array.isArray(node) && key !== undefined && /^(0|[1-9][0-9]*)$/.test(key)) {
      node = node[Number(key)];
      path += `[${key}]`;
    } else if (isSchema(node) && key !== undefined && Object.hasOwn(node, key)) {
      node = node[key];
      path += `.${quoted(key)}`;
    } else {
      return undefined;
    }
  }
  return { schema: node, path };
}

function pointerKey(part: string): string | undefined {
  try {
    return decodeURIComponent(part).replaceAll("~1", "/").replaceAll("~0", "~");
  } catch {
    return undefined;
  }
}

function jsonLength(value: unknown): number {
  try {
    return JSON.stringify(value)?.length ?? 4;
  } catch {
    return Infinity;
  }
}

function isSchema(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isSchemaNode(node: Node): node is Node<Schema> {
  return isSchema(node.schema);
}

// ---- Hints: the caller's `name=value` pairs, read in one pass.

/** The first value written after each `name=` or `name:` in `text` (quoted, or up to a space,
 * comma or semicolon, without trailing `.!?)]}`). Linear in the text's length. */
function parseHints(text: string): Map<string, string> {
  const hints = new Map<string, string>();
  const reader = new HintReader(text);
  let floor = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code !== 61 && code !== 58) continue; // = :
    const name = reader.nameBefore(floor, i);
    floor = i + 1;
    if (name === "" || hints.has(name)) continue;
    const value = reader.valueAfter(i + 1);
    if (value !== undefined && value.length <= LIMITS.length) hints.set(name, value);
  }
  return hints;
}

/** Reads names and values around the separators of a text. Its cursors only move forward (the
 * positions asked about only grow), so that each character is scanned a bounded number of
 * times. */
class HintReader {
  readonly #text: string;
  readonly #quotes = new Map<string, number>();
  #stop = -1;
  #trimmed = -1;
  // Non-ASCII characters tested once each: reading a 20 MB text of CJK pairs takes 0.4 s, not 0.8.
  readonly #letters = new Map<number, boolean>();

  constructor(text: string) {
    this.#text = text;
  }

  /** The name just before `at` (spaces and one closing quote skipped), not before `floor`. */
  nameBefore(floor: number, at: number): string {
    const text = this.#text;
    let end = at;
    while (end > floor && isSpace(text.charCodeAt(end - 1))) end--;
    if (end > floor && (text[end - 1] === '"' || text[end - 1] === "'")) end--;
    let start = end;
    while (start > floor && this.#isNameChar(text.charCodeAt(start - 1))) start--;
    return text.slice(start, end);
  }

  /** The value from `from` (spaces skipped): quoted, or bare. */
  valueAfter(from: number): string | undefined {
    const text = this.#text;
    let at = from;
    while (at < text.length && isSpace(text.charCodeAt(at))) at++;
    const quote = text[at];
    if (quote === '"' || quote === "'") {
      const close = this.#quote(quote, at + 1);
      if (close >= 0) return text.slice(at + 1, close);
    }
    const end = this.#bare(at);
    return end > at ? text.slice(at, end) : undefined;
  }

  /** The index of the first `quote` at or after `from`, or -1. */
  #quote(quote: string, from: number): number {
    const known = this.#quotes.get(quote);
    if (known === -1 || (known !== undefined && known >= from)) return known;
    const at = this.#text.indexOf(quote, from);
    this.#quotes.set(quote, at);
    return at;
  }

  /** Where a bare value from `from` ends: at the next space, comma or semicolon, less the
   * `.!?)]}` before it. */
  #bare(from: number): number {
    const text = this.#text;
    if (this.#stop < from) {
      let stop = from;
      for (; stop < text.length; stop++) {
        const code = text.charCodeAt(stop);
        if (code === 44 || code === 59 || isSpace(code)) break; // , ;
      }
      let trimmed = stop;
      while (trimmed > from && ".!?)]}".includes(text[trimmed - 1]!)) trimmed--;
      this.#stop = stop;
      this.#trimmed = trimmed;
    }
    return Math.max(from, this.#trimmed);
  }

  /** Letters, digits, `_`, `.`, `$` and `-`. */
  #isNameChar(code: number): boolean {
    if (code < 128) {
      return (code >= 97 && code <= 122) || (code >= 65 && code <= 90) ||
        (code >= 48 && code <= 57) || code === 95 || code === 46 || code === 36 || code === 45;
    }
    let letter = this.#letters.get(code);
    if (letter === undefined) {
      letter = /[\p{L}\p{N}]/u.test(String.fromCharCode(code));
      this.#letters.set(code, letter);
    }
    return letter;
  }
}

/** What `\s` matches. */
function isSpace(code: number): boolean {
  if (code < 128) return code === 32 || (code >= 9 && code <= 13);
  return code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f || code === 0x3000 ||
    code === 0xfeff;
}

// ---- Patterns: a matching string built by reading the pattern, which is never run.

/** A pattern with syntax not read here (lookarounds, backreferences, `\p{...}`, `\b`, ...). */
class Unreadable extends Error {}

/** A reading position in a pattern. */
interface Cursor {
  readonly text: string;
  at: number;
}

/** Character-class escapes and the code point ranges they stand for. */
const CLASS_ESCAPES = new Map<string, [number, number][]>([
  ["d", [[48, 57]]],
  ["w", [[48, 57], [65, 90], [95, 95], [97, 122]]],
  ["s", [[9, 13], [32, 32]]],
]);
/** Escapes of one character. */
const CHAR_ESCAPES = new Map([
  ["t", "\t"],
  ["n", "\n"],
  ["r", "\r"],
  ["f", "\f"],
  ["v", "\v"],
  ["0", "\0"],
]);
/** A character each negated class escape matches. */
const NEGATED_ESCAPES = new Map([["D", "a"], ["W", "-"], ["S", "a"]]);
/** What a negated class `[^...]` is tried with. */
const OUTSIDE = [..."a0x_ -A"];

/** A string matching `pattern` (first alternatives, fewest repeats), read without running it;
 * `undefined` for syntax not read here, a 400 when the string is longer than the limit. */
function patternString(pattern: string, param: string, budget: Budget): string | undefined {
  budget.work(pattern.length, param);
  const cursor: Cursor = { text: pattern, at: 0 };
  let out: string | null;
  try {
    out = alternatives(cursor, 0);
  } catch (e) {
    if (e instanceof Unreadable) return undefined;
    throw e;
  }
  if (cursor.at < pattern.length) return undefined;
  if (out === null) {
    throw sampleError(
      param,
      `needs strings of more than ${LIMITS.length} characters; the simulator samples at most ${LIMITS.length}.`,
    );
  }
  return out;
}

/** The string of the first alternative that fits in the length limit (`null` when none does). */
function alternatives(c: Cursor, depth: number): string | null {
  let out = sequence(c, depth);
  while (c.text[c.at] === "|") {
    c.at++;
    const next = sequence(c, depth);
    out ??= next;
  }
  return out;
}

function sequence(c: Cursor, depth: number): string | null {
  let out: string | null = "";
  while (c.at < c.text.length && c.text[c.at] !== "|" && c.text[c.at] !== ")") {
    const piece = repeat(atom(c, depth), quantifier(c));
    out = out === null || piece === null || out.length + piece.length > LIMITS.length
      ? null
      : out + piece;
  }
  return out;
}

function repeat(piece: string | null, times: number): string | null {
  if (times === 0 || piece === "") return "";
  if (piece === null || piece.length * times > LIMITS.length) return null;
  return piece.repeat(times);
}

/** The fewest repeats the quantifier at the cursor allows (1 when there is none). */
function quantifier(c: Cursor): number {
  const ch = c.text[c.at];
  let times = 1;
  if (ch === "*" || ch === "?") times = 0;
  else if (ch !== "+") {
    const braces = ch === "{" ? bracesAt(c.text, c.at) : undefined;
    if (braces === undefined) return 1;
    times = braces.min;
    c.at = braces.end - 1;
  }
  c.at++;
  if (c.text[c.at] === "?") c.at++;
  return times;
}

/** The `{n}`, `{n,}` or `{n,m}` at `at`: its minimum and the index after it. */
function bracesAt(text: string, at: number): { min: number; end: number } | undefined {
  let i = at + 1;
  while (isDigit(text[i])) i++;
  if (i === at + 1) return undefined;
  const min = Number(text.slice(at + 1, i));
  if (text[i] === ",") {
    i++;
    while (isDigit(text[i])) i++;
  }
  return text[i] === "}" ? { min, end: i + 1 } : undefined;
}

function atom(c: Cursor, depth: number): string | null {
  const ch = String.fromCodePoint(c.text.codePointAt(c.at)!);
  c.at += ch.length;
  switch (ch) {
    case "(":
      return group(c, depth);
    case "[":
      return classChar(c);
    case "\\":
      return escapeChar(c);
    case ".":
      return "a";
    case "^":
    case "$":
      return "";
    case "*":
    case "+":
    case "?":
      throw new Unreadable();
    default:
      return ch;
  }
}

function group(c: Cursor, depth: number): string | null {
  if (depth === LIMITS.patternDepth) throw new Unreadable();
  if (c.text.startsWith("?:", c.at)) c.at += 2;
  else if (c.text.startsWith("?<", c.at) && /[\p{L}_$]/u.test(c.text[c.at + 2] ?? "")) {
    const end = c.text.indexOf(">", c.at);
    if (end < 0) throw new Unreadable();
    c.at = end + 1;
  } else if (c.text[c.at] === "?") throw new Unreadable();
  const inner = alternatives(c, depth + 1);
  if (c.text[c.at] !== ")") throw new Unreadable();
  c.at++;
  return inner;
}

function escapeChar(c: Cursor): string {
  const ch = c.text[c.at++];
  if (ch === undefined) throw new Unreadable();
  const range = CLASS_ESCAPES.get(ch);
  if (range) return String.fromCodePoint(range[0]![0]);
  const known = CHAR_ESCAPES.get(ch) ?? NEGATED_ESCAPES.get(ch);
  if (known !== undefined) return known;
  if (/[A-Za-z0-9]/.test(ch) || ch > "~") throw new Unreadable();
  return ch;
}

/** A character of the class `[...]` at the cursor: its first, or for `[^...]` one of a few common
 * characters outside it. */
function classChar(c: Cursor): string {
  const negated = c.text[c.at] === "^";
  if (negated) c.at++;
  const ranges: [number, number][] = [];
  while (c.text[c.at] !== "]") {
    const low = classAtom(c);
    const single = low.length === 1 && low[0]![0] === low[0]![1];
    if (single && c.text[c.at] === "-" && c.text[c.at + 1] !== "]") {
      c.at++;
      const high = classAtom(c);
      if (high.length !== 1 || high[0]![0] !== high[0]![1] || high[0]![0] < low[0]![0]) {
        throw new Unreadable();
      }
      ranges.push([low[0]![0], high[0]![0]]);
    } else {
      ranges.push(...low);
    }
  }
  c.at++;
  const inside = (ch: string) =>
    ranges.some(([lo, hi]) => ch.charCodeAt(0) >= lo && ch.charCodeAt(0) <= hi);
  const pick = negated
    ? OUTSIDE.find((ch) => !inside(ch))
    : ranges[0] && String.fromCodePoint(ranges[0][0]);
  if (pick === undefined) throw new Unreadable();
  return pick;
}

function classAtom(c: Cursor): [number, number][] {
  const code = c.text.codePointAt(c.at);
  if (code === undefined) throw new Unreadable();
  c.at += code > 0xffff ? 2 : 1;
  if (code !== 0x5c) return [[code, code]];
  const ch = c.text[c.at++];
  if (ch === undefined) throw new Unreadable();
  const range = CLASS_ESCAPES.get(ch);
  if (range) return range;
  const known = CHAR_ESCAPES.get(ch);
  if (known !== undefined) return [[known.charCodeAt(0), known.charCodeAt(0)]];
  if (/[A-Za-z0-9]/.test(ch) || ch > "~") throw new Unreadable();
  return [[ch.charCodeAt(0), ch.charCodeAt(0)]];
}

function isDigit(ch: string | undefined): boolean {
  return ch !== undefined && ch >= "0" && ch <= "9";
}

/**
 * @module auditQuery
 * The `audit:query` mini-language over audit entries.
 *
 * ```
 * --where    expr    := term (OR term)*        term := factor (AND factor)*
 *                    factor := NOT factor | '(' expr ')' | field op value
 *                            | field IN '(' value (',' value)* ')' | field IS [NOT] NULL
 *                    op := = | != | < | <= | > | >= | ~   (~ is case-insensitive "contains")
 *                    value := 'text' | "text" | number | bare-word
 * --group-by field[, field]*                 one row per distinct combination, with `count`
 * --order-by field [asc|desc][, …]           `count` too when grouping; default timestamp, then id
 * ```
 *
 * Fields: id, feature_slug, wp_sequence, timestamp, actor, transition, from,
 * to (the two sides of `transition`), action, forced, evidence_refs (`=`
 * and `~` test membership). Keywords are case-insensitive. Errors name the
 * option and the 1-based column.
 */
import { WorkflowError } from '../errors.js';

/** The fields a query may name. */
export const QUERY_FIELDS = [
  'id',
  'feature_slug',
  'wp_sequence',
  'timestamp',
  'actor',
  'transition',
  'from',
  'to',
  'action',
  'forced',
  'evidence_refs',
] as const;
export type QueryField = (typeof QUERY_FIELDS)[number];
const NUMERIC: ReadonlySet<string> = new Set(['id', 'wp_sequence']);

type Value = string | number | boolean | null;
type Op = '=' | '!=' | '<' | '<=' | '>' | '>=' | '~';

/** A parsed `--where` expression. */
export type Predicate =
  | { kind: 'and' | 'or'; left: Predicate; right: Predicate }
  | { kind: 'not'; inner: Predicate }
  | { kind: 'compare'; field: QueryField; op: Op; value: Value }
  | { kind: 'in'; field: QueryField; values: Value[] }
  | { kind: 'null'; field: QueryField; negated: boolean };

interface Token {
  kind: 'word' | 'string' | 'number' | 'op' | 'lparen' | 'rparen' | 'comma' | 'end';
  text: string;
  column: number;
}

function fail(option: string, input: string, column: number, message: string): never {
  throw new WorkflowError('query_parse_error', `--${option}: ${message} at column ${column}`, {
    details: { field: option, option, column, input },
  });
}

function tokenize(input: string, option: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input[i]!;
    const column = i + 1;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '(' || c === ')' || c === ',') {
      tokens.push({ kind: c === '(' ? 'lparen' : c === ')' ? 'rparen' : 'comma', text: c, column });
      i++;
    } else if (c === "'" || c === '"') {
      let text = '';
      i++;
      for (;;) {
        if (i >= input.length) fail(option, input, column, `unterminated string starting with ${c}`);
        const d = input[i]!;
        if (d === '\\' && i + 1 < input.length) {
          text += input[i + 1];
          i += 2;
        } else if (d === c) {
          i++;
          break;
        } else {
          text += d;
          i++;
        }
      }
      tokens.push({ kind: 'string', text, column });
    } else if ('=!<>~'.includes(c)) {
      const two = input.slice(i, i + 2);
      const text = ['!=', '<=', '>=', '<>'].includes(two) ? two : c;
      if (text === '!') fail(option, input, column, 'expected "!=" after "!"');
      tokens.push({ kind: 'op', text: text === '<>' ? '!=' : text, column });
      i += text.length;
    } else {
      const match = /^[A-Za-z0-9_.:@/+-]+/.exec(input.slice(i));
      if (!match) fail(option, input, column, `unexpected character ${JSON.stringify(c)}`);
      const text = match[0];
      tokens.push({ kind: /^-?\d+(\.\d+)?$/.test(text) ? 'number' : 'word', text, column });
      i += text.length;
    }
  }
  tokens.push({ kind: 'end', text: '', column: input.length + 1 });
  return tokens;
}

function asField(token: Token, option: string, input: string, extra: readonly string[] = []): QueryField {
  const name = token.text.toLowerCase();
  if (token.kind !== 'word' || !((QUERY_FIELDS as readonly string[]).includes(name) || extra.includes(name))) {
    fail(
      option,
      input,
      token.column,
      `unknown field ${JSON.stringify(token.text || 'end of input')}; fields are ${[...QUERY_FIELDS, ...extra].join(', ')}`,
    );
  }
  return name as QueryField;
}

/**
 * Parses a `--where` expression.
 *
 * @example
 * ```ts
 * parseWhere("actor = alice AND (to = DONE OR forced = true) AND timestamp >= 2026-01-01");
 * ```
 */
export function parseWhere(input: string): Predicate {
  const option = 'where';
  const tokens = tokenize(input, option);
  let pos = 0;
  const peek = () => tokens[pos]!;
  const next = () => tokens[pos++]!;
  const keyword = (word: string) => peek().kind === 'word' && peek().text.toUpperCase() === word;

  const value = (field: QueryField): Value => {
    const t = next();
    if (t.kind === 'string') return t.text;
    if (t.kind === 'number') return NUMERIC.has(field) || field === 'evidence_refs' ? Number(t.text) : t.text;
    if (t.kind === 'word') {
      const lower = t.text.toLowerCase();
      if (field === 'forced' && (lower === 'true' || lower === 'false')) return lower === 'true';
      if (NUMERIC.has(field)) fail(option, input, t.column, `${field} compares with a number, got ${JSON.stringify(t.text)}`);
      return t.text;
    }
    return fail(option, input, t.column, `expected a value, got ${t.kind === 'end' ? 'end of input' : JSON.stringify(t.text)}`);
  };

  const factor = (): Predicate => {
    if (keyword('NOT')) {
      next();
      return { kind: 'not', inner: factor() };
    }
    if (peek().kind === 'lparen') {
      next();
      const inner = expr();
      const close = next();
      if (close.kind !== 'rparen') fail(option, input, close.column, 'expected ")"');
      return inner;
    }
    const field = asField(next(), option, input);
    if (keyword('IN')) {
      next();
      const open = next();
      if (open.kind !== 'lparen') fail(option, input, open.column, 'expected "(" after IN');
      const values = [value(field)];
      while (peek().kind === 'comma') {
        next();
        values.push(value(field));
      }
      const close = next();
      if (close.kind !== 'rparen') fail(option, input, close.column, 'expected "," or ")" in the IN list');
      return { kind: 'in', field, values };
    }
    if (keyword('IS')) {
      next();
      const negated = keyword('NOT');
      if (negated) next();
      const t = next();
      if (t.kind !== 'word' || t.text.toUpperCase() !== 'NULL') fail(option, input, t.column, 'expected NULL after IS');
      return { kind: 'null', field, negated };
    }
    const op = next();
    if (op.kind !== 'op') fail(option, input, op.column, `expected an operator (= != < <= > >= ~ IN IS) after ${field}`);
    return { kind: 'compare', field, op: op.text as Op, value: value(field) };
  };
  const term = (): Predicate => {
    let left = factor();
    while (keyword('AND')) {
      next();
      left = { kind: 'and', left, right: factor() };
    }
    return left;
  };
  const expr = (): Predicate => {
    let left = term();
    while (keyword('OR')) {
      next();
      left = { kind: 'or', left, right: term() };
    }
    return left;
  };
  if (peek().kind === 'end') fail(option, input, 1, 'the expression is empty');
  const result = expr();
  if (peek().kind !== 'end')
    fail(option, input, peek().column, `unexpected ${JSON.stringify(peek().text)}; join conditions with AND or OR`);
  return result;
}

/** Parses `--group-by`: a comma-separated list of fields. */
export function parseGroupBy(input: string): QueryField[] {
  const tokens = tokenize(input, 'group-by');
  const fields: QueryField[] = [];
  let pos = 0;
  for (;;) {
    fields.push(asField(tokens[pos++]!, 'group-by', input));
    const t = tokens[pos++]!;
    if (t.kind === 'end') return fields;
    if (t.kind !== 'comma') fail('group-by', input, t.column, 'expected "," between fields');
  }
}

/** One `--order-by` key. */
export interface OrderKey {
  field: QueryField | 'count';
  descending: boolean;
}

/** Parses `--order-by`: `field [asc|desc]` separated by commas. */
export function parseOrderBy(input: string, allowCount: boolean): OrderKey[] {
  const tokens = tokenize(input, 'order-by');
  const keys: OrderKey[] = [];
  let pos = 0;
  for (;;) {
    const field = asField(tokens[pos++]!, 'order-by', input, allowCount ? ['count'] : []) as QueryField | 'count';
    let t = tokens[pos++]!;
    let descending = false;
    if (t.kind === 'word' && ['ASC', 'DESC'].includes(t.text.toUpperCase())) {
      descending = t.text.toUpperCase() === 'DESC';
      t = tokens[pos++]!;
    }
    keys.push({ field, descending });
    if (t.kind === 'end') return keys;
    if (t.kind !== 'comma') fail('order-by', input, t.column, 'expected ASC, DESC or "," after the field');
  }
}

/** The value of a field of an entry (`from`/`to` split `transition`). */
export function fieldValue(entry: Record<string, unknown>, field: QueryField | 'count'): unknown {
  if (field === 'from' || field === 'to') {
    const [from, to] = String(entry.transition ?? '').split(' -> ');
    return field === 'from' ? from : to;
  }
  if (field === 'forced') return entry.forced === true;
  return entry[field] ?? null;
}

function compare(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
}

/** True when the entry satisfies the predicate. */
export function matches(entry: Record<string, unknown>, p: Predicate): boolean {
  switch (p.kind) {
    case 'and':
      return matches(entry, p.left) && matches(entry, p.right);
    case 'or':
      return matches(entry, p.left) || matches(entry, p.right);
    case 'not':
      return !matches(entry, p.inner);
    case 'null': {
      const v = fieldValue(entry, p.field);
      return (v === null || v === undefined) !== p.negated;
    }
    case 'in':
      return p.values.some((value) => matches(entry, { kind: 'compare', field: p.field, op: '=', value }));
    case 'compare': {
      const v = fieldValue(entry, p.field);
      if (Array.isArray(v)) {
        const has = v.some((x) => (p.op === '~' ? String(x).includes(String(p.value)) : compare(x, p.value) === 0));
        if (p.op === '=' || p.op === '~') return has;
        if (p.op === '!=') return !has;
        return false;
      }
      if (p.op === '~')
        return String(v ?? '')
          .toLowerCase()
          .includes(String(p.value).toLowerCase());
      const c = compare(v, p.value);
      return { '=': c === 0, '!=': c !== 0, '<': c < 0, '<=': c <= 0, '>': c > 0, '>=': c >= 0 }[p.op];
    }
  }
}

/** Options of {@link runQuery}, as the CLI passes them. */
export interface AuditQueryOptions {
  where?: string;
  groupBy?: string;
  orderBy?: string;
  limit?: number;
}

/** Rows of a query: entries, or `{<group fields>, count}` when grouping. */
export type AuditQueryRow = Record<string, unknown>;

/** Filters, groups, orders and limits entries. */
export function runQuery(entries: readonly Record<string, unknown>[], options: AuditQueryOptions): AuditQueryRow[] {
  const predicate = options.where?.trim() ? parseWhere(options.where) : undefined;
  const groupBy = options.groupBy?.trim() ? parseGroupBy(options.groupBy) : undefined;
  const orderBy = options.orderBy?.trim() ? parseOrderBy(options.orderBy, groupBy !== undefined) : undefined;
  if (options.limit !== undefined && (!Number.isInteger(options.limit) || options.limit < 1)) {
    throw new WorkflowError('invalid_argument', 'limit: must be a positive integer', { details: { field: 'limit' } });
  }
  let rows: AuditQueryRow[] = predicate ? entries.filter((e) => matches(e, predicate)) : [...entries];
  if (groupBy) {
    const groups = new Map<string, AuditQueryRow>();
    for (const e of rows) {
      const values = groupBy.map((f) => fieldValue(e, f));
      const key = JSON.stringify(values);
      const row = groups.get(key) ?? Object.fromEntries([...groupBy.map((f, i) => [f, values[i]]), ['count', 0]]);
      row.count = (row.count as number) + 1;
      groups.set(key, row);
    }
    rows = [...groups.values()];
  }
  const keys =
    orderBy ??
    (groupBy
      ? groupBy.map((field) => ({ field, descending: false }))
      : [
          { field: 'timestamp' as const, descending: false },
          { field: 'id' as const, descending: false },
        ]);
  rows.sort((a, b) => {
    for (const k of keys) {
      const c = compare(fieldValue(a, k.field), fieldValue(b, k.field));
      if (c !== 0) return k.descending ? -c : c;
    }
    return 0;
  });
  return options.limit ? rows.slice(0, options.limit) : rows;
}

/**
 * @module expression
 * The small language of alert conditions, parsed and type-checked when the
 * config loads so a typo fails at start rather than at 3 a.m.
 *
 * ```text
 * condition  := or ('by' 'provider')?
 * or         := and (('or' | '||') and)*
 * and        := unary (('and' | '&&') unary)*
 * unary      := ('not' | '!') unary | '(' or ')' | comparison
 * comparison := signal ('[' duration ']')? op value
 * op         := '>' | '>=' | '<' | '<=' | '==' | '!='
 * value      := number | number '%' | duration | 'string' | bare-word
 * ```
 *
 * `error_rate > 0.05`, `provider_health == unhealthy`, `rate_limit_count > 10`,
 * `p95_latency > 5s`, `error_rate[5m] > 5% and request_count[5m] >= 20 by provider`.
 * A condition that names a per-provider-only signal (`provider_health`) or
 * ends in `by provider` is evaluated once per provider; otherwise once for
 * the whole service. A comparison whose signal has no data is false.
 */
import { InvalidExpression } from '../errors.js';
import { parseDuration } from '../config/units.js';
import { DEFAULT_SIGNAL_WINDOW_MS, lookupSignal, type SignalKind, type SignalRef, signalNames } from './signals.js';

/** A comparison operator. */
export type ComparisonOperator = '>' | '>=' | '<' | '<=' | '==' | '!=';

/** A parsed condition node. */
export type ConditionNode =
  | { type: 'and' | 'or'; left: ConditionNode; right: ConditionNode }
  | { type: 'not'; operand: ConditionNode }
  | { type: 'compare'; signal: SignalRef; op: ComparisonOperator; value: number | string; text: string };

/** A condition, parsed and checked. */
export interface ParsedCondition {
  source: string;
  root: ConditionNode;
  /** `provider` when evaluated once per provider. */
  scope: 'global' | 'provider';
  /** Every signal the condition reads, in order of appearance. */
  signals: SignalRef[];
  /** The longest window any signal needs. */
  maxWindowMs: number;
}

type Token =
  | { kind: 'ident'; text: string; pos: number }
  | { kind: 'number'; value: number; text: string; pos: number }
  | { kind: 'percent'; value: number; text: string; pos: number }
  | { kind: 'duration'; ms: number; text: string; pos: number }
  | { kind: 'string'; value: string; text: string; pos: number }
  | { kind: 'op'; text: ComparisonOperator; pos: number }
  | { kind: 'punct'; text: '(' | ')' | '[' | ']' | '&&' | '||' | '!'; pos: number }
  | { kind: 'end'; text: ''; pos: number };

const OPERATORS = ['>=', '<=', '==', '!=', '>', '<'] as const;

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const rest = source.slice(i);
    const op = OPERATORS.find((o) => rest.startsWith(o));
    if (op) {
      tokens.push({ kind: 'op', text: op, pos: i });
      i += op.length;
      continue;
    }
    if (rest.startsWith('&&') || rest.startsWith('||')) {
      tokens.push({ kind: 'punct', text: rest.slice(0, 2) as '&&' | '||', pos: i });
      i += 2;
      continue;
    }
    if (c === '(' || c === ')' || c === '[' || c === ']' || c === '!') {
      tokens.push({ kind: 'punct', text: c, pos: i });
      i++;
      continue;
    }
    if (c === '=') throw new InvalidExpression(source, i, 'a single "=" is not an operator (use "==")');
    if (c === "'" || c === '"') {
      const close = source.indexOf(c, i + 1);
      if (close < 0) throw new InvalidExpression(source, i, 'unterminated string');
      tokens.push({ kind: 'string', value: source.slice(i + 1, close), text: source.slice(i, close + 1), pos: i });
      i = close + 1;
      continue;
    }
    const number = /^\d+(?:\.\d+)?/.exec(rest);
    if (number) {
      const unit = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d|w))+/.exec(rest);
      if (unit) {
        tokens.push({ kind: 'duration', ms: parseDuration(unit[0]), text: unit[0], pos: i });
        i += unit[0].length;
      } else if (rest[number[0].length] === '%') {
        tokens.push({ kind: 'percent', value: Number(number[0]) / 100, text: `${number[0]}%`, pos: i });
        i += number[0].length + 1;
      } else {
        tokens.push({ kind: 'number', value: Number(number[0]), text: number[0], pos: i });
        i += number[0].length;
      }
      if (/[A-Za-z_]/.test(source[i] ?? '')) throw new InvalidExpression(source, i, 'unknown unit (durations use ms, s, m, h, d, w)');
      continue;
    }
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(rest);
    if (word) {
      tokens.push({ kind: 'ident', text: word[0], pos: i });
      i += word[0].length;
      continue;
    }
    throw new InvalidExpression(source, i, `unexpected character ${JSON.stringify(c)}`);
  }
  tokens.push({ kind: 'end', text: '', pos: source.length });
  return tokens;
}

const KEYWORDS = new Set(['and', 'or', 'not', 'by']);
const HEALTH_VALUES = new Set(['healthy', 'unhealthy']);

class Parser {
  private at = 0;
  readonly signals: SignalRef[] = [];

  constructor(
    private readonly source: string,
    private readonly tokens: Token[],
  ) {}

  private peek(): Token {
    return this.tokens[this.at]!;
  }

  private next(): Token {
    return this.tokens[this.at++]!;
  }

  private isWord(word: string): boolean {
    const token = this.peek();
    return token.kind === 'ident' && token.text.toLowerCase() === word;
  }

  private fail(token: Token, problem: string): never {
    throw new InvalidExpression(this.source, token.pos, problem);
  }

  parse(): { root: ConditionNode; byProvider: boolean } {
    if (this.peek().kind === 'end') this.fail(this.peek(), 'the condition is empty');
    const root = this.parseOr();
    let byProvider = false;
    if (this.isWord('by')) {
      this.next();
      const what = this.next();
      if (what.kind !== 'ident' || what.text !== 'provider') this.fail(what, 'expected "provider" after "by"');
      byProvider = true;
    }
    const end = this.peek();
    if (end.kind !== 'end') this.fail(end, `unexpected ${JSON.stringify(end.text)} (expected "and", "or" or the end)`);
    return { root, byProvider };
  }

  private parseOr(): ConditionNode {
    let left = this.parseAnd();
    while (this.isWord('or') || (this.peek().kind === 'punct' && this.peek().text === '||')) {
      this.next();
      left = { type: 'or', left, right: this.parseAnd() };
    }
    return left;
  }

  private parseAnd(): ConditionNode {
    let left = this.parseUnary();
    while (this.isWord('and') || (this.peek().kind === 'punct' && this.peek().text === '&&')) {
      this.next();
      left = { type: 'and', left, right: this.parseUnary() };
    }
    return left;
  }

  private parseUnary(): ConditionNode {
    const token = this.peek();
    if (this.isWord('not') || (token.kind === 'punct' && token.text === '!')) {
      this.next();
      return { type: 'not', operand: this.parseUnary() };
    }
    if (token.kind === 'punct' && token.text === '(') {
      this.next();
      const inner = this.parseOr();
      const close = this.next();
      if (close.kind !== 'punct' || close.text !== ')') this.fail(close, 'expected ")"');
      return inner;
    }
    return this.parseComparison();
  }

  private parseComparison(): ConditionNode {
    const name = this.next();
    if (name.kind !== 'ident' || KEYWORDS.has(name.text.toLowerCase())) {
      this.fail(name, name.kind === 'end' ? 'expected a signal name, found the end' : `expected a signal name, found ${JSON.stringify(name.text)}`);
    }
    const spec = lookupSignal(name.text);
    if (!spec) this.fail(name, `unknown signal ${JSON.stringify(name.text)} (known: ${signalNames().join(', ')})`);
    let windowMs: number | null = spec.windowed ? DEFAULT_SIGNAL_WINDOW_MS : null;
    if (this.peek().kind === 'punct' && this.peek().text === '[') {
      const open = this.next();
      if (!spec.windowed) this.fail(open, `${name.text} is not computed over a window`);
      const duration = this.next();
      if (duration.kind !== 'duration' || duration.ms <= 0) this.fail(duration, 'expected a window such as [5m]');
      windowMs = duration.ms;
      const close = this.next();
      if (close.kind !== 'punct' || close.text !== ']') this.fail(close, 'expected "]"');
    }
    const op = this.next();
    if (op.kind !== 'op') this.fail(op, `expected a comparison (>, >=, <, <=, ==, !=) after ${name.text}`);
    const valueToken = this.next();
    const value = this.checkValue(name.text, spec.kind, op, valueToken);
    const signal: SignalRef = { name: name.text, kind: spec.kind, scope: spec.scope, windowMs };
    if (spec.quantile !== undefined) signal.quantile = spec.quantile;
    this.signals.push(signal);
    const text = this.source.slice(name.pos, valueToken.pos + valueToken.text.length);
    return { type: 'compare', signal, op: op.text, value, text };
  }

  private checkValue(signal: string, kind: SignalKind, op: Token & { kind: 'op' }, token: Token): number | string {
    if (kind === 'health') {
      if (op.text !== '==' && op.text !== '!=') this.fail(op, `${signal} compares only with == or !=`);
      const word = token.kind === 'ident' || token.kind === 'string' ? (token.kind === 'ident' ? token.text : token.value) : undefined;
      if (word === undefined || !HEALTH_VALUES.has(word)) this.fail(token, `${signal} is compared with healthy or unhealthy`);
      return word;
    }
    switch (token.kind) {
      case 'number':
        return token.value;
      case 'percent':
        if (kind !== 'ratio') this.fail(token, `a percentage compares only with a ratio such as error_rate, not ${signal}`);
        return token.value;
      case 'duration':
        if (kind !== 'seconds') this.fail(token, `a duration compares only with a latency signal, not ${signal}`);
        return token.ms / 1000;
      default:
        return this.fail(token, token.kind === 'end' ? `expected a value after ${op.text}` : `expected a number for ${signal}`);
    }
  }
}

/**
 * Parses and type-checks an alert condition.
 *
 * @throws {InvalidExpression} naming the column and the problem.
 * @example
 * ```ts
 * const condition = parseCondition('p95_latency[10m] > 5s');
 * condition.scope;       // 'global'
 * condition.maxWindowMs; // 600_000
 * ```
 */
export function parseCondition(source: string): ParsedCondition {
  const parser = new Parser(source, tokenize(source));
  const { root, byProvider } = parser.parse();
  const perProvider = byProvider || parser.signals.some((s) => s.scope === 'provider');
  if (perProvider) {
    const globalOnly = parser.signals.find((s) => s.scope === 'global');
    if (globalOnly) {
      throw new InvalidExpression(source, source.indexOf(globalOnly.name), `${globalOnly.name} has no per-provider value`);
    }
  }
  const maxWindowMs = Math.max(0, ...parser.signals.map((s) => s.windowMs ?? 0));
  return { source, root, scope: perProvider ? 'provider' : 'global', signals: parser.signals, maxWindowMs };
}

/** Reads a signal's current value; `undefined` when it has no data. */
export type SignalReader = (signal: SignalRef, provider: string | null) => number | string | undefined;

/** The outcome of one evaluation, with the value each comparison saw. */
export interface ConditionResult {
  active: boolean;
  /** Keyed by the comparison's text (`p95_latency > 5s`); `null` when there was no data. */
  values: Record<string, number | string | null>;
}

function compare(left: number | string, op: ComparisonOperator, right: number | string): boolean {
  switch (op) {
    case '>':
      return left > right;
    case '>=':
      return left >= right;
    case '<':
      return left < right;
    case '<=':
      return left <= right;
    case '==':
      return left === right;
    case '!=':
      return left !== right;
  }
}

/**
 * Evaluates a parsed condition for one scope (`provider` is `null` for the
 * whole service). Every comparison is evaluated, so the result carries all
 * the values an operator will want to see.
 *
 * @example
 * ```ts
 * evaluateCondition(parseCondition('error_rate > 0.05'), () => 0.2, null); // { active: true, values: { 'error_rate > 0.05': 0.2 } }
 * ```
 */
export function evaluateCondition(condition: ParsedCondition, read: SignalReader, provider: string | null): ConditionResult {
  const values: Record<string, number | string | null> = {};
  const walk = (node: ConditionNode): boolean => {
    switch (node.type) {
      case 'and': {
        const left = walk(node.left);
        const right = walk(node.right);
        return left && right;
      }
      case 'or': {
        const left = walk(node.left);
        const right = walk(node.right);
        return left || right;
      }
      case 'not':
        return !walk(node.operand);
      case 'compare': {
        const value = read(node.signal, provider);
        values[node.text] = value === undefined || (typeof value === 'number' && Number.isNaN(value)) ? null : value;
        if (value === undefined || (typeof value === 'number' && Number.isNaN(value))) return false;
        return compare(value, node.op, node.value);
      }
    }
  };
  return { active: walk(condition.root), values };
}

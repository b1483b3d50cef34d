/**
 * @module output
 * Rendering results: one JSON document for `--output json`, aligned
 * columns for `table`, pipe tables for `markdown`. Errors go to stderr,
 * as `{"error":{"code","message","details"?}}` in JSON mode and as one
 * readable line otherwise.
 */
import { CLI_EXIT_CODES, CliError } from './errors.js';
import type { CliIO, GlobalOptions, OutputFormat } from './io.js';

/** How a result shows in table and markdown modes. */
export interface Presentation {
  /** Columns of a list, in order (default: the keys of the rows). */
  columns?: string[];
  /** Free text instead of a table (table mode only; markdown gets the same text). */
  text?: string;
  /** A line printed after the table (table mode only), e.g. "3 entries". */
  footer?: string;
}

/** Prints a command's result in the chosen format. */
export function emit(io: CliIO, format: OutputFormat, value: unknown, presentation: Presentation = {}): void {
  if (format === 'json') {
    io.stdout(`${JSON.stringify(value ?? null, null, 2)}\n`);
    return;
  }
  if (presentation.text !== undefined) {
    io.stdout(presentation.text.endsWith('\n') || presentation.text === '' ? presentation.text : `${presentation.text}\n`);
    return;
  }
  io.stdout(render(format, value, presentation.columns));
  if (presentation.footer && format === 'table') io.stdout(`${presentation.footer}\n`);
}

/** Renders a value as a table (arrays of records), or as field/value rows (one record). */
export function render(format: 'table' | 'markdown', value: unknown, columns?: string[]): string {
  if (Array.isArray(value)) {
    if (value.length === 0) return format === 'markdown' ? '_none_\n' : '(none)\n';
    const rows: Record<string, unknown>[] = value.map((row) =>
      row && typeof row === 'object' && !Array.isArray(row) ? (row as Record<string, unknown>) : { value: row },
    );
    const cols = columns ?? [...new Set(rows.flatMap((row) => Object.keys(row)))];
    return table(
      format,
      cols,
      rows.map((row) => cols.map((col) => cell(row[col]))),
    );
  }
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    return table(
      format,
      ['field', 'value'],
      entries.map(([k, v]) => [k, cell(v)]),
    );
  }
  return `${cell(value)}\n`;
}

/** One cell: scalars as they are, lists joined, nested records as compact JSON. */
export function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value.replace(/\r?\n/g, ' ⏎ ');
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value) && value.every((v) => v === null || typeof v !== 'object')) return value.join(', ');
  return JSON.stringify(value);
}

function table(format: 'table' | 'markdown', columns: string[], rows: string[][]): string {
  if (format === 'markdown') {
    const esc = (text: string) => text.replace(/\|/g, '\\|');
    const lines = [`| ${columns.map(esc).join(' | ')} |`, `| ${columns.map(() => '---').join(' | ')} |`];
    for (const row of rows) lines.push(`| ${row.map(esc).join(' | ')} |`);
    return `${lines.join('\n')}\n`;
  }
  const widths = columns.map((col, i) => Math.max(col.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return `${[line(columns.map((c) => c.toUpperCase())), ...rows.map(line)].join('\n')}\n`;
}

/** The error body every surface shares. */
export interface ErrorBody {
  error: { code: string; message: string; details?: Record<string, unknown> };
}

/** Reads `code`, `message` and `details` off anything thrown. */
export function errorBody(error: unknown): ErrorBody {
  if (error instanceof Error && typeof (error as Error & { code?: unknown }).code === 'string') {
    const details = (error as Error & { details?: Record<string, unknown> }).details;
    const code = (error as Error & { code: string }).code;
    // Node's own errors (ENOENT, ERR_*) are not ours to name: they are internal failures.
    if (/^[a-z][a-z_]*$/.test(code)) return { error: { code, message: error.message, ...(details ? { details } : {}) } };
  }
  return { error: { code: 'internal', message: error instanceof Error ? error.message : String(error) } };
}

/** Writes an error to stderr in the chosen format. */
export function reportError(io: CliIO, globals: Pick<GlobalOptions, 'output' | 'verbose'>, error: unknown): void {
  const body = errorBody(error);
  if (globals.output === 'json') {
    io.stderr(`${JSON.stringify(body)}\n`);
    return;
  }
  io.stderr(`yard: ${body.error.message} (${body.error.code})\n`);
  const violations = body.error.details?.violations;
  if (Array.isArray(violations)) {
    for (const v of violations as { rule_id: string; message: string; remediation: string }[]) {
      io.stderr(`  - ${v.rule_id}: ${v.message}\n    fix: ${v.remediation}\n`);
    }
  }
  // git's own words behind a refusal the message already explains: for -v, not for everyone.
  const gitOutput = body.error.details?.git_output;
  if (globals.verbose >= 1 && typeof gitOutput === 'string') io.stderr(`${gitOutput.replace(/^/gm, '  git: ')}\n`);
  if (globals.verbose >= 2 && error instanceof Error && error.stack) io.stderr(`${error.stack}\n`);
}

/** The exit code of anything thrown: the workflow's table for workflow codes, the CLI's for its own. */
export async function exitCodeOf(error: unknown): Promise<number> {
  if (error instanceof CliError) return error.exitCode;
  const { exitCodeFor } = await import('@switchyard/workflow');
  return exitCodeFor(error) || CLI_EXIT_CODES.internal;
}

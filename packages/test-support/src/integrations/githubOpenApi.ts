/**
 * GitHub's published REST description (`@octokit/openapi`, the
 * api.github.com document), loaded once per process, with Ajv validators
 * compiled only for the operations a test uses. The fake GitHub checks
 * every request (path, method, path and query parameters, body) and every
 * answer it gives against it, so the fake cannot drift from the real API;
 * {@link exampleOf} builds the minimal schema-valid object a fake's answer
 * starts from.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

type Json = Record<string, unknown>;
type Schema = Json;

interface Spec {
  paths: Record<string, Record<string, Json>>;
  components: Json;
}

let loaded: { spec: Spec; ajv: Ajv } | undefined;

function load(): { spec: Spec; ajv: Ajv } {
  if (loaded) return loaded;
  const require = createRequire(import.meta.url);
  const spec = JSON.parse(readFileSync(require.resolve('@octokit/openapi/generated/api.github.com.json'), 'utf8')) as Spec;
  // OpenAPI 3.0 keywords Ajv does not know (example, x-github, ...) are not schema errors.
  const ajv = new Ajv({ strict: false, allErrors: true, logger: false, discriminator: true });
  const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;
  (addFormats as unknown as (ajv: Ajv) => void)(ajv);
  ajv.addSchema({ $id: 'gh', components: { schemas: toJsonSchema((spec.components as { schemas: Json }).schemas) } });
  loaded = { spec, ajv };
  return loaded;
}

/**
 * OpenAPI 3.0's `nullable: true` in JSON Schema terms: `null` joins the
 * type (and the enum), or, without a type (`allOf`, `anyOf`), the whole
 * schema becomes "that, or null".
 */
function toJsonSchema(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toJsonSchema);
  if (!value || typeof value !== 'object') return value;
  const { nullable, ...rest } = value as Json;
  const converted = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, toJsonSchema(v)])) as Json;
  if (nullable !== true) return nullable === undefined ? converted : { ...converted, nullable };
  if (typeof converted.type === 'string') {
    return {
      ...converted,
      type: [converted.type, 'null'],
      ...(Array.isArray(converted.enum) ? { enum: [...converted.enum, null] } : {}),
    };
  }
  return { anyOf: [converted, { type: 'null' }] };
}

/** `#/components/...` references rewritten to the added `gh` document, so inline schemas compile on their own. */
function rebase(value: unknown): unknown {
  return rebaseRefs(toJsonSchema(value));
}

function rebaseRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rebaseRefs);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `gh${v}` : rebaseRefs(v)]),
    );
  }
  return value;
}

/** Follows a `$ref` to a component that is not a schema (a parameter, a response, a request body). */
function deref<T extends Json>(value: T): T {
  const ref = value.$ref;
  if (typeof ref !== 'string') return value;
  let node: unknown = load().spec;
  for (const part of ref.replace(/^#\//, '').split('/')) node = (node as Json)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  return deref(node as T);
}

/** One parameter of an operation, with its compiled schema. */
interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: Schema;
  validate: ValidateFunction;
}

/** An operation of GitHub's REST API, ready to check requests and answers against. */
export interface Operation {
  operationId: string;
  method: string;
  path: string;
  pattern: RegExp;
  pathNames: string[];
  parameters: Parameter[];
  body?: ValidateFunction;
  bodyRequired: boolean;
  responses: Map<number, ValidateFunction | null>;
}

const operations = new Map<string, Operation>();

/** The operation with this id (`issues/create`), compiled on first use. */
export function operation(operationId: string): Operation {
  const cached = operations.get(operationId);
  if (cached) return cached;
  const { spec, ajv } = load();
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if ((op as Json).operationId !== operationId) continue;
      const pathNames: string[] = [];
      const pattern = new RegExp(
        `^${path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
          pathNames.push(name);
          return '([^/]+)';
        })}$`,
      );
      const parameters = (((op as Json).parameters as Json[] | undefined) ?? []).map((raw) => {
        const p = deref(raw) as unknown as { name: string; in: Parameter['in']; required?: boolean; schema: Schema };
        return {
          name: p.name,
          in: p.in,
          required: p.required === true,
          schema: p.schema,
          validate: ajv.compile(rebase(p.schema) as Schema),
        };
      });
      const requestBody = (op as Json).requestBody ? deref((op as Json).requestBody as Json) : undefined;
      const bodySchema = (requestBody?.content as Json | undefined)?.['application/json'] as Json | undefined;
      const responses = new Map<number, ValidateFunction | null>();
      for (const [status, raw] of Object.entries((op as Json).responses as Json)) {
        const response = deref(raw as Json);
        const schema = ((response.content as Json | undefined)?.['application/json'] as Json | undefined)?.schema;
        responses.set(Number(status), schema ? ajv.compile(rebase(schema) as Schema) : null);
      }
      const compiled: Operation = {
        operationId,
        method: method.toUpperCase(),
        path,
        pattern,
        pathNames,
        parameters,
        ...(bodySchema?.schema ? { body: ajv.compile(rebase(bodySchema.schema) as Schema) } : {}),
        bodyRequired: requestBody?.required === true,
        responses,
      };
      operations.set(operationId, compiled);
      return compiled;
    }
  }
  throw new Error(`GitHub's OpenAPI description has no operation ${operationId}`);
}

function coerce(value: string, schema: Schema): unknown {
  const type = schema.type;
  if (type === 'integer' || type === 'number') return /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
  if (type === 'boolean') return value === 'true' ? true : value === 'false' ? false : value;
  return value;
}

const describe = (validate: ValidateFunction) => (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ');

/**
 * The violations of a request against an operation: path and query
 * parameters (unknown query parameters included) and the JSON body.
 */
export function checkRequest(op: Operation, url: URL, pathValues: string[], body: unknown, hasBody: boolean): string[] {
  const problems: string[] = [];
  const where = `${op.method} ${op.path} (${op.operationId})`;
  for (const [i, name] of op.pathNames.entries()) {
    const p = op.parameters.find((x) => x.in === 'path' && x.name === name);
    if (!p) problems.push(`${where}: path parameter ${name} is not described`);
    else if (!p.validate(coerce(decodeURIComponent(pathValues[i]!), p.schema)))
      problems.push(`${where}: path ${name}: ${describe(p.validate)}`);
  }
  const query = op.parameters.filter((p) => p.in === 'query');
  for (const [name, value] of url.searchParams) {
    const p = query.find((x) => x.name === name);
    if (!p) problems.push(`${where}: unknown query parameter ${name}`);
    else if (!p.validate(coerce(value, p.schema))) problems.push(`${where}: query ${name}: ${describe(p.validate)}`);
  }
  for (const p of query)
    if (p.required && !url.searchParams.has(p.name)) problems.push(`${where}: required query parameter ${p.name} missing`);
  if (op.body) {
    if (!hasBody) {
      if (op.bodyRequired) problems.push(`${where}: the request body is required`);
    } else if (!op.body(body)) problems.push(`${where}: body: ${describe(op.body)}`);
  } else if (hasBody) problems.push(`${where}: the operation takes no body`);
  return problems;
}

/** The violations of an answer: a status the operation does not document, or a body its schema refuses. */
export function checkResponse(op: Operation, status: number, body: unknown): string[] {
  const where = `${op.method} ${op.path} (${op.operationId}) → ${status}`;
  // GitHub answers 401 "Bad credentials" on every operation; the description lists it only on some.
  if (status === 401 && !op.responses.has(401)) return [];
  if (!op.responses.has(status)) return [`${where}: status not documented`];
  const validate = op.responses.get(status);
  if (validate && !validate(body)) return [`${where}: ${describe(validate)}`];
  return [];
}

/**
 * The minimal object a schema accepts: required properties only, the first
 * enum value or union member, null where nullable. A fake's answer starts
 * from it and sets the fields it models, so fields it does not model are
 * still schema-valid.
 */
export function exampleOf(schemaOrRef: Schema, depth = 0): unknown {
  const schema = resolveSchema(schemaOrRef);
  if (depth > 12) return null;
  if (schema.nullable === true) return null;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (Array.isArray(schema.allOf)) {
    return Object.assign({}, ...(schema.allOf as Schema[]).map((s) => exampleOf(s, depth + 1)));
  }
  const union = (schema.oneOf ?? schema.anyOf) as Schema[] | undefined;
  if (union) return exampleOf(union[0]!, depth + 1);
  switch (schema.type) {
    case 'object': {
      const props = (schema.properties ?? {}) as Record<string, Schema>;
      const out: Json = {};
      for (const name of (schema.required as string[] | undefined) ?? [])
        out[name] = props[name] ? exampleOf(props[name], depth + 1) : null;
      return out;
    }
    case 'array':
      return [];
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 1;
    case 'boolean':
      return false;
    case 'string':
      return stringFor(schema.format as string | undefined);
    default:
      return null;
  }
}

function stringFor(format: string | undefined): string {
  if (format === 'date-time') return '2026-01-01T00:00:00Z';
  if (format === 'date') return '2026-01-01';
  if (format === 'uri' || format === 'url') return 'https://github.example/x';
  if (format === 'uri-template') return 'https://github.example/x{/y}';
  if (format === 'email') return 'octo@github.example';
  if (format === 'uuid') return '00000000-0000-4000-8000-000000000000';
  return 'x';
}

function resolveSchema(schema: Schema): Schema {
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  const name = ref.replace('#/components/schemas/', '');
  return resolveSchema(((load().spec.components as { schemas: Record<string, Schema> }).schemas[name] ?? {}) as Schema);
}

/** The minimal valid answer of an operation for a status, to fill in. */
export function exampleResponse(operationId: string, status: number): Json {
  const { spec } = load();
  const op = operation(operationId);
  const raw = (spec.paths[op.path]![op.method.toLowerCase()]!.responses as Json)[String(status)] as Json;
  const schema = ((deref(raw).content as Json)['application/json'] as Json).schema as Schema;
  return exampleOf(schema) as Json;
}

/** The minimal valid object of a component schema (`check-run`, `simple-commit-status`). */
export function exampleOfComponent(name: string): Json {
  return exampleOf({ $ref: `#/components/schemas/${name}` }) as Json;
}

/**
 * @module struct
 * JSON values to and from `google.protobuf.Struct` / `Value` as
 * proto-loader represents them (`{fields: {k: {stringValue: …}}}`), for the
 * free-form parts of the API: dispatch arguments and results, audit details
 * and agent event data.
 */
import type { Struct, Struct__Output } from './generated/google/protobuf/Struct.js';
import type { Value, Value__Output } from './generated/google/protobuf/Value.js';

/** A JSON value as a `google.protobuf.Value`. */
export function toValue(value: unknown): Value {
  if (value === null || value === undefined) return { nullValue: 'NULL_VALUE' };
  if (typeof value === 'number') return Number.isFinite(value) ? { numberValue: value } : { stringValue: String(value) };
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  if (Array.isArray(value)) return { listValue: { values: value.map(toValue) } };
  if (typeof value === 'object') return { structValue: toStruct(value as Record<string, unknown>) };
  return { stringValue: String(value) };
}

/** A JSON object as a `google.protobuf.Struct` (undefined members are left out, as JSON does). */
export function toStruct(value: Record<string, unknown>): Struct {
  return {
    fields: Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => [k, toValue(v)]),
    ),
  };
}

/** A `google.protobuf.Value` as JSON. */
export function fromValue(value: Value__Output | null | undefined): unknown {
  if (!value) return null;
  switch (value.kind) {
    case 'numberValue':
      return value.numberValue;
    case 'stringValue':
      return value.stringValue;
    case 'boolValue':
      return value.boolValue;
    case 'listValue':
      return (value.listValue?.values ?? []).map(fromValue);
    case 'structValue':
      return fromStruct(value.structValue);
    default:
      return null;
  }
}

/** A `google.protobuf.Struct` as a JSON object. */
export function fromStruct(struct: Struct__Output | null | undefined): Record<string, unknown> {
  return Object.fromEntries(Object.entries(struct?.fields ?? {}).map(([k, v]) => [k, fromValue(v)]));
}

/**
 * Legacy query parameters → request fields, by the fields' JSON names
 * (`box_id` → `boxId`) and their `(docflow.legacy.query_alias)` names,
 * matched case-insensitively. A bare key or an empty value means "absent"; a
 * known parameter given twice is an error, and so is a field given under two
 * names with different values; unknown parameters are ignored.
 */
import {
  type DescField,
  type DescMessage,
  getOption,
  hasOption,
  ScalarType,
} from "@bufbuild/protobuf";
import { not_on_legacy_paths, query_alias } from "../../gen/docflow/legacy/options_pb";

/**
 * A field the legacy paths neither read nor write, `(docflow.legacy.not_on_legacy_paths)`:
 * the resource API's and the RPC protocols' additions (AIP-158 paging, AIP-155 request ids).
 */
export function notOnLegacyPaths(field: DescField): boolean {
  return hasOption(field, not_on_legacy_paths) && getOption(field, not_on_legacy_paths);
}

export class QueryError extends Error {
  override readonly name = "QueryError";
}

/**
 * The scalar and enum fields, which may come from the query string; none when
 * the body is the whole request. A body field is always a message (the rules
 * refuse any other at start-up), so it is never among them.
 */
export function queryFields(schema: DescMessage, bodyField: string): DescField[] {
  if (bodyField === "*") {
    return [];
  }
  return schema.fields.filter(
    (f) => (f.fieldKind === "scalar" || f.fieldKind === "enum") && !notOnLegacyPaths(f),
  );
}

/** Values by field local name, only for the parameters that are present. */
export function readQuery(
  search: URLSearchParams,
  fields: readonly DescField[],
): Record<string, unknown> {
  const byKey = keysOf(fields);
  const seen = new Set<string>();
  /** The name and the raw value each field was first given a value under. */
  const given = new Map<DescField, { readonly name: string; readonly raw: string }>();
  const values: Record<string, unknown> = {};
  for (const [rawKey, raw] of search) {
    const key = byKey.get(rawKey.toLowerCase());
    if (!key) {
      continue;
    }
    const { field, name } = key;
    if (seen.has(name)) {
      throw new QueryError(`parameter ${name} is given more than once`);
    }
    seen.add(name);
    if (raw === "") {
      continue;
    }
    const before = given.get(field);
    if (before) {
      if (before.raw !== raw) {
        throw new QueryError(
          `parameters ${before.name} and ${name} name the same field and differ`,
        );
      }
      continue;
    }
    given.set(field, { name, raw });
    values[field.localName] = convert(field, raw);
  }
  return values;
}

/** A name a field is accepted under: its JSON name or one of its aliases. */
interface QueryKey {
  readonly field: DescField;
  readonly name: string;
}

/** The fields' names and aliases, lower-cased, worked out once per list (a route's list lives as long as the route). */
const keyMaps = new WeakMap<readonly DescField[], ReadonlyMap<string, QueryKey>>();
function keysOf(fields: readonly DescField[]): ReadonlyMap<string, QueryKey> {
  let byKey = keyMaps.get(fields);
  // Stryker disable next-line ConditionalExpression: the cache; working the map out again gives the same map
  if (!byKey) {
    byKey = new Map(
      fields.flatMap((field) =>
        [field.jsonName, ...queryAliases(field)].map(
          (name) => [name.toLowerCase(), { field, name }] as const,
        ),
      ),
    );
    // Stryker disable next-line CallExpression: the cache (see above)
    keyMaps.set(fields, byKey);
  }
  return byKey;
}

/** The other names a field is accepted under in a legacy query (`(docflow.legacy.query_alias)`). */
export function queryAliases(field: DescField): readonly string[] {
  return getOption(field, query_alias);
}

const INT32 = /^-?\d{1,10}$/;
const INT64 = /^-?\d{1,19}$/;

function convert(field: DescField, raw: string): unknown {
  const name = field.jsonName;
  if (field.fieldKind === "enum") {
    const value = field.enum.values.find((v) => v.name === raw);
    if (!value) throw new QueryError(`parameter ${name} has an unknown value`);
    return value.number;
  }
  // A message or a list (only scalars and enums are query fields, but the
  // function is exported) has no scalar type and falls to the default.
  switch (field.scalar) {
    case ScalarType.STRING:
      return raw;
    case ScalarType.BOOL:
      if (raw.toLowerCase() === "true") return true;
      if (raw.toLowerCase() === "false") return false;
      throw new QueryError(`parameter ${name} must be true or false`);
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32: {
      const n = INT32.test(raw) ? Number(raw) : Number.NaN;
      if (!Number.isSafeInteger(n) || n < -2147483648 || n > 2147483647) {
        throw new QueryError(`parameter ${name} must be an integer`);
      }
      return n;
    }
    case ScalarType.UINT32:
    case ScalarType.FIXED32: {
      const n = INT32.test(raw) ? Number(raw) : Number.NaN;
      if (!Number.isSafeInteger(n) || n < 0 || n > 4294967295) {
        throw new QueryError(`parameter ${name} must be a non-negative integer`);
      }
      return n;
    }
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      if (!INT64.test(raw)) throw new QueryError(`parameter ${name} must be an integer`);
      return BigInt(raw);
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT: {
      const n = Number(raw);
      if (!Number.isFinite(n)) throw new QueryError(`parameter ${name} must be a number`);
      return n;
    }
    default:
      throw new QueryError(`parameter ${name} cannot be given in the query`);
  }
}

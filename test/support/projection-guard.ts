/**
 * Projections enforced in tests. The embedded engine ignores a query's
 * projection and returns whole documents (SPEC §7, docs/testing.md), so a
 * store that reads a field it did not project would pass every test here and
 * break on a real MongoDB, which leaves that field out. The guard wraps the
 * database the service's stores get: every document a find, findOne or
 * findOneAnd… returns is cut to its projection the way MongoDB cuts it
 * (inclusion with `_id` unless excluded, dotted paths into subdocuments and
 * arrays of them, exclusion), raw BSON included. On a real server the
 * documents already are their projection and the guard changes nothing.
 *
 * It is no mock: every command still goes to the server; only what comes
 * back is held to what a real server would send.
 */
import { BSON, type Collection, type Db, type Document, type FindCursor } from "mongodb";

type Projection = Readonly<Record<string, unknown>>;
/** A projection as a tree: `true` keeps (or drops) the whole value, a subtree its listed fields. */
type Tree = Map<string, Tree | true>;

/** Whether a projection keeps what it lists (inclusion) or drops it (exclusion). */
function isInclusion(projection: Projection): boolean {
  return Object.entries(projection).some(([name, v]) => name !== "_id" && isOn(v));
}

const isOn = (v: unknown) => v === 1 || v === true;

function treeOf(paths: readonly string[]): Tree {
  const root: Tree = new Map();
  for (const path of paths) {
    const parts = path.split(".");
    let node = root;
    parts.forEach((part, i) => {
      if (i === parts.length - 1) {
        node.set(part, true);
        return;
      }
      let next = node.get(part);
      if (next === true) return;
      if (next === undefined) {
        next = new Map();
        node.set(part, next);
      }
      node = next;
    });
  }
  return root;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" &&
  v !== null &&
  !Array.isArray(v) &&
  !(v instanceof Date) &&
  !(v instanceof Uint8Array) &&
  !(v as { _bsontype?: string })._bsontype;

/** Inclusion: the fields the tree names; into arrays of subdocuments element by element (scalars dropped). */
function keep(value: Record<string, unknown>, tree: Tree): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, sub] of tree) {
    if (!(name in value)) continue;
    const v = value[name];
    if (sub === true) out[name] = v;
    else if (isObject(v)) out[name] = keep(v, sub);
    else if (Array.isArray(v)) out[name] = v.filter(isObject).map((e) => keep(e, sub));
  }
  return out;
}

/** Exclusion: everything but the fields the tree names. */
function drop(value: Record<string, unknown>, tree: Tree): Record<string, unknown> {
  const out: Record<string, unknown> = { ...value };
  for (const [name, sub] of tree) {
    if (!(name in out)) continue;
    const v = out[name];
    if (sub === true) delete out[name];
    else if (isObject(v)) out[name] = drop(v, sub);
    else if (Array.isArray(v)) out[name] = v.map((e) => (isObject(e) ? drop(e, sub) : e));
  }
  return out;
}

/** A document as MongoDB returns it under `projection`. */
export function projected(doc: Document, projection: Projection | undefined): Document {
  if (!projection || Object.keys(projection).length === 0) return doc;
  const names = Object.keys(projection);
  if (isInclusion(projection)) {
    const listed = names.filter((n) => n !== "_id" && isOn(projection[n]));
    const withId = !("_id" in projection) || isOn(projection._id);
    return keep(doc, treeOf(withId ? ["_id", ...listed] : listed));
  }
  return drop(doc, treeOf(names.filter((n) => !isOn(projection[n]))));
}

/** The same for a document the driver hands over as raw BSON (`raw: true`). */
function projectedRaw(raw: Uint8Array, projection: Projection | undefined): Uint8Array {
  if (!projection) return raw;
  return BSON.serialize(projected(BSON.deserialize(raw), projection));
}

function projectOne<T>(result: T, options: { projection?: Projection; raw?: boolean } | undefined) {
  const projection = options?.projection;
  if (result === null || result === undefined || !projection) return result;
  if (result instanceof Uint8Array) return projectedRaw(result, projection) as T;
  return projected(result as Document, projection) as T;
}

/** Where each method takes its options. */
const OPTIONS_AT: Readonly<Record<string, number>> = {
  findOne: 1,
  findOneAndDelete: 1,
  findOneAndUpdate: 2,
  findOneAndReplace: 2,
};

function guardCollection<T extends Document>(collection: Collection<T>): Collection<T> {
  return new Proxy(collection, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      switch (property) {
        case "find":
          return (filter: unknown, options?: { projection?: Projection; raw?: boolean }) => {
            const cursor = value.call(target, filter, options) as FindCursor<unknown>;
            if (!options?.projection) return cursor;
            return cursor.map((doc) => projectOne(doc, options));
          };
        case "findOne":
        case "findOneAndUpdate":
        case "findOneAndReplace":
        case "findOneAndDelete":
          return async (...args: unknown[]) => {
            const at = OPTIONS_AT[property];
            const options = args[at] as { projection?: Projection; raw?: boolean } | undefined;
            const result = await value.apply(target, args);
            // includeResultMetadata: { value, ok, … } (the service does not ask for it).
            if (result && typeof result === "object" && "lastErrorObject" in result) {
              return { ...result, value: projectOne(result.value, options) };
            }
            return projectOne(result, options);
          };
        default:
          return value.bind(target);
      }
    },
  });
}

/** `db` with every collection's reads held to their projections. */
export function guardProjections(db: Db): Db {
  return new Proxy(db, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property === "collection") {
        return (name: string, options?: unknown) =>
          guardCollection(value.call(target, name, options) as Collection<Document>);
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

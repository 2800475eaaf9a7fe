/**
 * `If-Match` (RFC 9110 §13.1.1) as the handlers read it, on every protocol
 * (an HTTP header on the resource API and the legacy paths, metadata on
 * gRPC and Connect): `*`, or a list of entity tags. A weak tag (`W/"…"`)
 * never matches strongly, so it is dropped from the list, which may then be
 * empty (nothing matches). A value that is neither is a bad request.
 * Parsed by one scan (no regular expression: the value is the caller's).
 */
import type { GroupPrecondition } from "../domain/counteragent-groups";
import { invalidArgument } from "../domain/errors";

export const IF_MATCH = "if-match";

/** The methods that read If-Match: the writes of a counteragent group (the OpenAPI document says so). */
const CONDITIONAL: ReadonlySet<string> = new Set([
  "docflow.api.v1.CounteragentService.UpdateCounteragentGroup",
  "docflow.api.v1.CounteragentService.DeleteCounteragentGroup",
]);

export function conditional(method: {
  readonly parent: { readonly typeName: string };
  readonly name: string;
}): boolean {
  return CONDITIONAL.has(`${method.parent.typeName}.${method.name}`);
}
/** The response header (metadata) that carries a resource's entity tag. */
export const ETAG = "etag";

/** The precondition of `value` (the header, its repeats joined by ", "); undefined: none. */
export function parseIfMatch(value: string | null | undefined): GroupPrecondition | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (text === "*") return { any: true };
  const etags: string[] = [];
  let i = 0;
  let items = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x2c || c === 0x20 || c === 0x09) {
      i++;
      continue;
    }
    let weak = false;
    if (c === 0x57 && text.charCodeAt(i + 1) === 0x2f) {
      weak = true;
      i += 2;
    }
    if (text.charCodeAt(i) !== 0x22) throw badIfMatch();
    const end = text.indexOf('"', i + 1);
    if (end < 0) throw badIfMatch();
    for (let j = i + 1; j < end; j++) {
      const d = text.charCodeAt(j);
      // etagc: %x21 / %x23-7E / obs-text
      if (d < 0x21 || d === 0x7f) throw badIfMatch();
    }
    if (!weak) etags.push(text.slice(i, end + 1));
    items++;
    i = end + 1;
    const next = text.charCodeAt(i);
    if (i < text.length && next !== 0x2c && next !== 0x20 && next !== 0x09) throw badIfMatch();
  }
  if (items === 0) throw badIfMatch();
  return { etags };
}

const badIfMatch = () =>
  invalidArgument('If-Match must be "*" or a list of entity tags ("…" or W/"…")');

/**
 * The legacy HTTP paths, read from the `google.api.http` rules of the
 * registered RPCs: an RPC with a rule gets its legacy path with no other
 * code. Each rule is resolved once, at start-up, into the fields it names;
 * what the bridge cannot serve is refused here, not ignored.
 */
import {
  type DescField,
  type DescMethod,
  type DescMethodUnary,
  getOption,
  hasOption,
} from "@bufbuild/protobuf";
import { http } from "../../gen/google/api/annotations_pb";
import { queryAliases, queryFields } from "./query";

export interface LegacyRoute {
  /** Upper-case HTTP verb. */
  readonly verb: string;
  /** Literal path, e.g. `/Restore`. */
  readonly path: string;
  readonly method: DescMethodUnary;
  /** "" when the call has no body, "*" when the body is the whole request, else the body field's name. */
  readonly body: string;
  /** The message field the body fills, when `body` names one. */
  readonly bodyField: (DescField & { fieldKind: "message" }) | undefined;
  /** The request fields that come from the query string. */
  readonly queryFields: readonly DescField[];
}

export function legacyRoutesOf(methods: Iterable<DescMethod>): LegacyRoute[] {
  const routes: LegacyRoute[] = [];
  for (const method of methods) {
    if (!hasOption(method, http)) {
      continue;
    }
    const name = `${method.parent.typeName}.${method.name}`;
    const refuse = (why: string): never => {
      throw new Error(`${name}: ${why}`);
    };
    const rule = getOption(method, http);
    const { case: verb, value } = rule.pattern;
    if (verb === undefined || verb === "custom") {
      return refuse(`unsupported http rule pattern (${verb ?? "none"})`);
    }
    if (value.includes("{")) refuse(`path variables are not supported (${value})`);
    if (rule.responseBody !== "") refuse("response_body is not supported");
    // The rule's additional bindings are standard bindings, served by the JSON profile
    // (src/http/transcoding.ts): only the rule itself is a legacy path.
    if (method.methodKind !== "unary") refuse("only unary RPCs can have a legacy path");
    let bodyField: LegacyRoute["bodyField"];
    if (rule.body !== "" && rule.body !== "*") {
      const field = method.input.fields.find((f) => f.name === rule.body);
      if (field?.fieldKind !== "message") {
        refuse(`body field "${rule.body}" is not a message field of ${method.input.typeName}`);
      }
      bodyField = field as LegacyRoute["bodyField"];
    }
    const fields = queryFields(method.input, rule.body);
    const names = new Set<string>();
    for (const key of fields.flatMap((f) => [f.jsonName, ...queryAliases(f)])) {
      if (names.has(key.toLowerCase()))
        refuse(`query parameter ${key} names two fields, or one twice`);
      names.add(key.toLowerCase());
    }
    routes.push({
      verb: String(verb).toUpperCase(),
      path: String(value),
      method: method as DescMethodUnary,
      body: rule.body,
      bodyField,
      queryFields: fields,
    });
  }
  return routes;
}

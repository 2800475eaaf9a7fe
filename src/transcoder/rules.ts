/**
 * `google.api.http` rules → bindings, once, at start-up: every rule and each
 * of its `additional_bindings` (nested ones refused, as the spec says) is
 * resolved into the fields it names, and whatever cannot be served is refused
 * with the method's name and the reason — never ignored, never left for a
 * request to find.
 *
 * The rule type is structural (`HttpRuleLike`): the generated `HttpRule` of
 * google/api/http.proto fits it, and this module needs no generated code.
 */
import type { DescField, DescMessage, DescMethod } from "@bufbuild/protobuf";
import { type PathTemplate, parseTemplate, TemplateError } from "./template";

/** What this module reads of a `google.api.HttpRule`. */
export interface HttpRuleLike {
  readonly pattern:
    | { readonly case: "get" | "put" | "post" | "delete" | "patch"; readonly value: string }
    | { readonly case: "custom"; readonly value: { readonly kind: string; readonly path: string } }
    | { readonly case: undefined; readonly value?: undefined };
  readonly body: string;
  readonly responseBody: string;
  readonly additionalBindings: readonly HttpRuleLike[];
}

export const HTTP_BODY = "google.api.HttpBody";

/** One binding of a method: an HTTP method and a path template, with the fields they fill. */
export interface Binding<P = unknown> {
  readonly method: DescMethod;
  /** `pkg.Service.Method`, for messages. */
  readonly name: string;
  readonly httpMethod: string;
  readonly template: PathTemplate;
  /** The variables' fields, in template order. */
  readonly pathFields: readonly (readonly DescField[])[];
  /** "" (no body), "*" (every field the path leaves) or a field name. */
  readonly body: string;
  /** The field the body fills, when `body` names one. */
  readonly bodyField: DescField | undefined;
  /** The request is a google.api.HttpBody (or the body field is one): any content type. */
  readonly httpBodyRequest: boolean;
  /** The response field written as the body, when `response_body` names one. */
  readonly responseField: DescField | undefined;
  /** The response (or its response_body field) is a google.api.HttpBody. */
  readonly httpBodyResponse: boolean;
  /** Field paths (proto names) the path or the body sets. */
  readonly bound: ReadonlySet<string>;
  /** Index among the method's bindings: 0 for the rule itself. */
  readonly index: number;
  /** What the caller chose for this binding (a profile). */
  readonly profile: P;
}

export class RuleError extends Error {
  override readonly name = "RuleError";
}

/**
 * The bindings of one method's rule. `profileOf` says how each is served,
 * by its index (0: the rule itself, then its additional bindings in order):
 * the caller's choice, per binding, so that one method can keep a legacy
 * path and have standard bindings beside it.
 */
export function bindingsOf<P>(
  method: DescMethod,
  rule: HttpRuleLike,
  profileOf: (index: number) => P,
): Binding<P>[] {
  const name = `${method.parent.typeName}.${method.name}`;
  const bindings = [compile(method, name, rule, profileOf(0), 0)];
  for (const extra of rule.additionalBindings) {
    if (extra.additionalBindings.length > 0) {
      throw new RuleError(`${name}: an additional binding cannot have additional bindings`);
    }
    const index = bindings.length;
    bindings.push(compile(method, name, extra, profileOf(index), index));
  }
  return bindings;
}

function compile<P>(
  method: DescMethod,
  name: string,
  rule: HttpRuleLike,
  profile: P,
  index: number,
): Binding<P> {
  const refuse = (why: string): never => {
    throw new RuleError(`${name}: ${why}`);
  };
  if (method.methodKind === "client_streaming" || method.methodKind === "bidi_streaming") {
    refuse(`a ${method.methodKind.replace("_", "-")} method cannot have an HTTP binding`);
  }
  const { pattern } = rule;
  if (pattern.case === undefined) return refuse("the rule has no pattern (get, post, …, custom)");
  const httpMethod = pattern.case === "custom" ? pattern.value.kind : pattern.case.toUpperCase();
  const path = pattern.case === "custom" ? pattern.value.path : pattern.value;
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(httpMethod)) {
    refuse(`"${httpMethod}" is not an HTTP method`);
  }
  let template: PathTemplate;
  try {
    template = parseTemplate(path);
  } catch (error) {
    return refuse(error instanceof TemplateError ? error.message : String(error));
  }
  const bound = new Set<string>();
  const pathFields = template.variables.map((v) => {
    const fields = fieldPath(method.input, v.fieldPath, refuse);
    const leaf = fields.at(-1) as DescField;
    if (leaf.fieldKind === "list" || leaf.fieldKind === "map") {
      refuse(`the path variable ${v.fieldPath.join(".")} is a ${leaf.fieldKind} field`);
    }
    if (leaf.fieldKind === "message") {
      refuse(`the path variable ${v.fieldPath.join(".")} is a message field`);
    }
    bound.add(fields.map((f) => f.name).join("."));
    return fields;
  });
  const input = method.input;
  let bodyField: DescField | undefined;
  if (rule.body !== "" && rule.body !== "*") {
    bodyField = input.fields.find((f) => f.name === rule.body);
    if (!bodyField) refuse(`the body field "${rule.body}" is not a field of ${input.typeName}`);
    bound.add(rule.body);
  }
  if (rule.body !== "" && (httpMethod === "GET" || httpMethod === "DELETE")) {
    // The spec: GET and DELETE carry no body; a rule that says otherwise is a mistake.
    refuse(`a ${httpMethod} binding cannot have a body`);
  }
  let responseField: DescField | undefined;
  if (rule.responseBody !== "") {
    responseField = method.output.fields.find((f) => f.name === rule.responseBody);
    if (!responseField) {
      refuse(
        `the response_body field "${rule.responseBody}" is not a field of ${method.output.typeName}`,
      );
    }
  }
  const isHttpBody = (m: DescMessage | undefined) => m?.typeName === HTTP_BODY;
  const bodyMessage =
    bodyField === undefined ? (rule.body === "*" ? input : undefined) : messageOf(bodyField);
  const responseMessage = responseField === undefined ? method.output : messageOf(responseField);
  return {
    method,
    name,
    httpMethod,
    template,
    pathFields,
    body: rule.body,
    bodyField,
    httpBodyRequest: isHttpBody(bodyMessage),
    responseField,
    httpBodyResponse: isHttpBody(responseMessage),
    bound,
    index,
    profile,
  };
}

function messageOf(field: DescField): DescMessage | undefined {
  return field.fieldKind === "message" ? field.message : undefined;
}

/** The fields of a dotted path (proto names), each but the last a singular message. */
function fieldPath(
  schema: DescMessage,
  path: readonly string[],
  refuse: (why: string) => never,
): DescField[] {
  const fields: DescField[] = [];
  let at: DescMessage | undefined = schema;
  for (const part of path) {
    const field: DescField | undefined = at?.fields.find((f) => f.name === part);
    if (!field) return refuse(`${path.join(".")} is not a field path of ${schema.typeName}`);
    fields.push(field);
    at = field.fieldKind === "message" ? field.message : undefined;
  }
  return fields;
}

/**
 * The legacy HTTP paths, read from the `google.api.http` rules of the
 * registered RPCs: an RPC with a rule gets its legacy path with no other code.
 */
import {
  type DescMethod,
  type DescMethodUnary,
  type DescService,
  getOption,
  hasOption,
} from "@bufbuild/protobuf";
import { http } from "../../gen/google/api/annotations_pb";

export interface LegacyRoute {
  /** Upper-case HTTP verb. */
  readonly verb: string;
  /** Literal path, e.g. `/Restore`. */
  readonly path: string;
  readonly service: DescService;
  readonly method: DescMethodUnary;
  /** "" when the call has no body, "*" when the body is the whole request, else the body field's name. */
  readonly body: string;
}

export function legacyRoutesOf(
  handlers: Iterable<{ readonly service: DescService; readonly method: DescMethod }>,
): LegacyRoute[] {
  const routes: LegacyRoute[] = [];
  for (const { service, method } of handlers) {
    if (!hasOption(method, http)) {
      continue;
    }
    const rule = getOption(method, http);
    const { case: verb, value } = rule.pattern;
    if (verb === undefined || verb === "custom" || typeof value !== "string") {
      throw new Error(`${method.parent.typeName}.${method.name}: unsupported http rule`);
    }
    if (value.includes("{")) {
      throw new Error(
        `${method.parent.typeName}.${method.name}: path variables are not supported (${value})`,
      );
    }
    if (method.methodKind !== "unary") {
      throw new Error(
        `${method.parent.typeName}.${method.name}: only unary RPCs can have a legacy path`,
      );
    }
    if (
      rule.body !== "" &&
      rule.body !== "*" &&
      !method.input.fields.some((f) => f.name === rule.body)
    ) {
      throw new Error(
        `${method.parent.typeName}.${method.name}: body field "${rule.body}" does not exist`,
      );
    }
    routes.push({
      verb: verb.toUpperCase(),
      path: value,
      service,
      method: method as DescMethodUnary,
      body: rule.body,
    });
  }
  return routes;
}

/**
 * The transcoder: the `google.api.http` rules of any set of methods compiled
 * into one route table at start-up (rules.ts, route-table.ts), each binding
 * served by the profile the host chose for it (json-profile.ts is the
 * spec's; a host may bring its own), every call run in process by the
 * host's invoker: its implementations, its interceptors.
 *
 * It imports only @bufbuild/protobuf and @connectrpc/connect, and nothing
 * of the service around it (test/unit/architecture.test.ts says so).
 */
import type { DescMethod } from "@bufbuild/protobuf";
import { createContextKey } from "@connectrpc/connect";
import { DecodeFailure, type Exchange, type Invoker, type PendingInput } from "./exchange";
import type { Profile } from "./profile";
import { type BoundVariable, createRouteTable, type RouteTableOptions } from "./route-table";
import { type Binding, bindingsOf, type HttpRuleLike } from "./rules";

export interface TranscoderOptions extends RouteTableOptions {
  /** The rule of a method, or undefined when it has none (the generated `http` extension, read with getOption). */
  readonly ruleOf: (method: DescMethod) => HttpRuleLike | undefined;
  /** The profile a binding is served with, by its method and its index (0: the rule itself, then its additional bindings). */
  readonly profileOf: (method: DescMethod, index: number) => Profile;
}

/**
 * The binding a call came through, for an implementation that wants it (a
 * host's invoker puts it in the call's context values); undefined for a call
 * that came another way.
 */
export const httpBindingKey = createContextKey<Binding<Profile> | undefined>(undefined, {
  description: "the google.api.http binding a call came through",
});

export type TranscoderMatch =
  | {
      readonly kind: "found";
      readonly binding: Binding<Profile>;
      readonly variables: readonly BoundVariable[];
    }
  | {
      readonly kind: "method-not-allowed";
      readonly allowed: readonly string[];
      /** A binding of the path (its profile answers the 405). */
      readonly first: Binding<Profile>;
    }
  | { readonly kind: "not-found" };

export interface Transcoder {
  readonly bindings: readonly Binding<Profile>[];
  /** The binding of a request, by HTTP method and raw path (no query). */
  match(httpMethod: string, rawPath: string): TranscoderMatch;
  /** Serves a matched request: decode, call, answer (or the error). */
  serve<C>(
    found: { readonly binding: Binding<Profile>; readonly variables: readonly BoundVariable[] },
    query: string,
    exchange: Exchange,
    invoker: Invoker<C>,
    call: C,
  ): Promise<void>;
}

/** Compiles the rules of `methods`; throws (naming the methods) on any rule it cannot serve. */
export function createTranscoder(
  methods: Iterable<DescMethod>,
  options: TranscoderOptions,
): Transcoder {
  const table = createRouteTable<Binding<Profile>>(options);
  const bindings: Binding<Profile>[] = [];
  for (const method of methods) {
    const rule = options.ruleOf(method);
    if (!rule) continue;
    for (const binding of bindingsOf(method, rule, (index) => options.profileOf(method, index))) {
      const { profile } = binding;
      profile.check?.(binding);
      table.add({
        httpMethod: binding.httpMethod,
        template: binding.template,
        caseInsensitive: profile.caseInsensitivePaths,
        exactTrailingSlash: profile.exactTrailingSlash === true,
        name: binding.name,
        value: binding,
      });
      bindings.push(binding);
    }
  }
  return {
    bindings,
    match(httpMethod, rawPath) {
      let found = table.match(httpMethod, rawPath);
      // HEAD where GET is served (RFC 9110 §9.3.2), for a profile that says so: the GET
      // binding, answered without its body.
      if (httpMethod === "HEAD" && found.kind === "method-not-allowed") {
        const get = table.match("GET", rawPath);
        if (get.kind === "found" && get.binding.value.profile.headWhereGet) found = get;
      }
      if (found.kind === "found") {
        return { kind: "found", binding: found.binding.value, variables: found.variables };
      }
      if (found.kind === "method-not-allowed") {
        const { allowed } = found;
        const first = found.first.value;
        const head =
          first.profile.headWhereGet === true &&
          allowed.includes("GET") &&
          !allowed.includes("HEAD");
        return {
          kind: "method-not-allowed",
          allowed: head ? [...allowed, "HEAD"] : allowed,
          first,
        };
      }
      return found;
    },
    async serve(found, query, exchange, invoker, call) {
      const { binding, variables } = found;
      const { profile, method } = binding;
      // Read when the host's pipeline asks for it: after authentication.
      const input: PendingInput = async () => {
        try {
          return await profile.decode(binding, variables, query, exchange);
        } catch (error) {
          return new DecodeFailure(error);
        }
      };
      if (method.methodKind === "server_streaming") {
        await profile.answerStream(
          binding,
          exchange,
          invoker.serverStream(method, input, call),
          query,
        );
        return;
      }
      const result = await invoker.unary(method, input, call);
      if (exchange.closed) return;
      if (result.error) await profile.fail(exchange, result.error);
      else
        await profile.answer(
          binding,
          exchange,
          result.output,
          query,
          result.context?.responseHeader,
        );
    },
  };
}

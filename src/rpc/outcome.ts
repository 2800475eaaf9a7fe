/**
 * How one RPC call ended, for metrics and traces (src/observability): which
 * method ran and with which code. The pipeline's outermost interceptor
 * writes it into a holder the front puts in the call's context values; a
 * protocol adapter that answers before any interceptor ran (a bad encoding,
 * a body over the limit, an unknown method) writes the code it answered.
 */
import type { DescMethod } from "@bufbuild/protobuf";
import { type Code, ConnectError, createContextKey, type Interceptor } from "@connectrpc/connect";

/** What the call ended with: `null` for success, a code for an error; `undefined` while unknown. */
export interface CallOutcome {
  code: Code | null | undefined;
  /** The fully qualified method the pipeline ran (`docflow.api.v1.X/Y`). */
  method: string | undefined;
}

export const callOutcomeKey = createContextKey<CallOutcome | undefined>(undefined, {
  description: "call outcome",
});

/** `docflow.api.v1.X/Y` of each method, made once. */
const methodNames = new WeakMap<DescMethod, string>();

function methodName(method: DescMethod): string {
  let name = methodNames.get(method);
  if (name === undefined) {
    name = `${method.parent.typeName}/${method.name}`;
    methodNames.set(method, name);
  }
  return name;
}

/** Outermost interceptor: records how the call ended. */
export const outcomeInterceptor: Interceptor = (next) => async (req) => {
  const outcome = req.contextValues.get(callOutcomeKey);
  if (!outcome) return next(req);
  outcome.method = methodName(req.method);
  try {
    const res = await next(req);
    outcome.code = null;
    return res;
  } catch (error) {
    outcome.code = ConnectError.from(error).code;
    throw error;
  }
};

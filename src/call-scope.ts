/**
 * The call that the work running now belongs to, through every await
 * (AsyncLocalStorage): the storage boundary asks it before it starts an
 * operation, so that a call already over — its deadline passed, its client
 * gone, it failed — sends nothing more to the database (docs/operations.md,
 * "Timeouts and deadlines").
 */
import { AsyncLocalStorage } from "node:async_hooks";

export interface CallScope {
  /** The call has ended (answered, failed, timed out, or its client left). */
  readonly over: boolean;
  /** Why it ended early, if it did. */
  readonly reason: unknown;
}

const scope = new AsyncLocalStorage<CallScope>();

/** Runs `work` (and everything it awaits) as part of `call`. */
export function runInCall<T>(call: CallScope, work: () => T): T {
  return scope.run(call, work);
}

/** Throws why the current call ended, if it has; outside any call, nothing. */
export function throwIfCallOver(): void {
  const call = scope.getStore();
  if (call?.over) throw call.reason;
}

/**
 * The box-level checks every operation starts with, in the order of docs/api.md §4:
 * 403 (token not bound to the box) before 402 (subscription ended), so that a
 * caller without access learns nothing about the box.
 */
import { insufficientScope } from "./bearer";
import { permissionDenied, subscriptionEnded } from "./errors";
import type { Box, Caller, EmployeeRights } from "./model";
import type { BoxStore, Clock, EmployeeStore } from "./ports";

export interface BoxAccessDeps {
  readonly boxes: BoxStore;
  readonly employees: EmployeeStore;
  readonly now: Clock;
}

export interface BoxAccess {
  readonly box: Box;
  /** The caller's own rights in the box. */
  readonly self: EmployeeRights;
}

export async function openBox(
  deps: BoxAccessDeps,
  caller: Caller,
  boxId: string,
): Promise<BoxAccess> {
  if (caller.missingScope !== undefined) {
    throw insufficientScope(caller.missingScope);
  }
  const [self, box] = await Promise.all([
    deps.employees.findRights(boxId, caller.userId),
    deps.boxes.findBox(boxId),
  ]);
  if (!self || !box) {
    throw permissionDenied("access to the box is forbidden for this token");
  }
  if (
    box.apiSubscriptionEndsAt !== null &&
    box.apiSubscriptionEndsAt.getTime() <= deps.now().getTime()
  ) {
    throw subscriptionEnded();
  }
  return { box, self };
}

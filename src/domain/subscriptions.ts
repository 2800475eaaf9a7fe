/** E-mail notification subscriptions of an employee (docs/api.md §6.3). */
import type { BoxAccessDeps } from "./box-access";
import { openBox } from "./box-access";
import { invalidArgument, notFound, permissionDenied } from "./errors";
import type { Caller, Employee, EmployeeRights } from "./model";
import { requireId } from "./validate";

/** Every kind of e-mail notification, in the order the API lists them. */
export const SUBSCRIPTION_CATALOG = [
  "CounteragentInvitation",
  "CounteragentInvitationResponses",
  "NewIncomingDocuments",
  "CounteragentSignatures",
  "CounteragentSignatureDenials",
  "ResolutionRequests",
  "ResolutionResults",
  "EmployeeRequests",
  "News",
  "ChatMessages",
] as const;
export type SubscriptionId = (typeof SUBSCRIPTION_CATALOG)[number];

const KNOWN_IDS: ReadonlySet<string> = new Set(SUBSCRIPTION_CATALOG);

export function isSubscriptionId(id: string): id is SubscriptionId {
  return KNOWN_IDS.has(id);
}

export interface SubscriptionState {
  readonly id: SubscriptionId;
  readonly isSubscribed: boolean;
}

export interface SubscriptionChange {
  readonly id: string;
  readonly isSubscribed: boolean;
}

export interface EmployeeRef {
  readonly boxId: string;
  readonly userId: string;
}

export async function getSubscriptions(
  deps: BoxAccessDeps,
  caller: Caller,
  request: EmployeeRef,
): Promise<SubscriptionState[]> {
  const ref = checkRef(request);
  const target = await findTarget(deps, caller, ref);
  return catalogView(target);
}

/** Sets each listed subscription in one atomic update; the others keep their value. */
export async function updateSubscriptions(
  deps: BoxAccessDeps,
  caller: Caller,
  request: EmployeeRef & { readonly changes: readonly SubscriptionChange[] },
): Promise<SubscriptionState[]> {
  const ref = checkRef(request);
  const changes = checkChanges(request.changes);
  if (Object.keys(changes).length === 0) {
    return catalogView(await findTarget(deps, caller, ref));
  }
  await authorize(deps, caller, ref);
  // One round trip: the write answers with the employee as it left him.
  const target = await deps.employees.setSubscriptions(ref.boxId, ref.userId, changes);
  if (!target) {
    throw employeeNotFound(ref.userId);
  }
  return catalogView(target);
}

function checkRef(request: EmployeeRef): EmployeeRef {
  return { boxId: requireId("boxId", request.boxId), userId: requireId("userId", request.userId) };
}

function checkChanges(changes: readonly SubscriptionChange[]): Record<string, boolean> {
  const byId: Record<string, boolean> = {};
  for (const change of changes) {
    if (!isSubscriptionId(change.id)) {
      throw invalidArgument(
        `unknown subscription Id "${change.id.slice(0, 64)}"`,
        "Subscriptions.UnknownId",
      );
    }
    if (Object.hasOwn(byId, change.id)) {
      throw invalidArgument(
        `subscription Id "${change.id}" is listed twice`,
        "Subscriptions.DuplicateId",
      );
    }
    byId[change.id] = change.isSubscribed;
  }
  return byId;
}

/** Administrators of the box, or the employee himself (docs/api.md §6.3). */
async function authorize(
  deps: BoxAccessDeps,
  caller: Caller,
  ref: EmployeeRef,
): Promise<EmployeeRights> {
  const { self } = await openBox(deps, caller, ref.boxId);
  if (!self.isAdministrator && self.userId !== ref.userId) {
    throw permissionDenied("only an administrator of the box or the employee himself may do this");
  }
  return self;
}

async function findTarget(
  deps: BoxAccessDeps,
  caller: Caller,
  ref: EmployeeRef,
): Promise<Employee> {
  await authorize(deps, caller, ref);
  // Read fresh, also for the caller himself: rights may come from a cache, subscriptions never do.
  const target = await deps.employees.findEmployee(ref.boxId, ref.userId);
  if (!target) {
    throw employeeNotFound(ref.userId);
  }
  return target;
}

const employeeNotFound = (userId: string) =>
  notFound(`the box has no employee "${userId}"`, "Employee.NotFound");

function catalogView(employee: Employee): SubscriptionState[] {
  return SUBSCRIPTION_CATALOG.map((id) => ({
    id,
    isSubscribed: employee.subscriptions[id] ?? true,
  }));
}

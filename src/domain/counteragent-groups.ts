/**
 * The counteragent-group family (docs/api.md §6.4): CreateCounteragentGroup,
 * UpdateCounteragentGroup, DeleteCounteragentGroup, GetCounteragentGroup,
 * GetCounteragentGroups and AddCounteragentToGroup.
 *
 * Groups are records of their own; membership stays on each counteragent
 * (its `counteragentGroupId`), so that GetCounteragentsFromGroup pages a
 * group on its own index. With no transactions, Delete and Add keep "no
 * member points at a group that no longer exists" between them:
 * - Delete marks the group as being deleted (from then on every other call
 *   treats it as gone), moves every member to the default group, then
 *   removes the record. A Delete that finds the group already marked (an
 *   earlier Delete stopped half-way) does the same and finishes the job.
 * - Add checks the group, moves the counteragent with one conditional
 *   update, then reads the group again: if it is gone or being deleted by
 *   now, a Delete may have moved the members before this write landed, so
 *   Add moves the counteragent back to the default group (conditionally) and
 *   answers 404. Either the Delete's move sees the Add's write, or the Add's
 *   second read sees the Delete's mark: the mark comes before the move and
 *   the write before the second read.
 */
import { createHash, randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { BoxAccessDeps } from "./box-access";
import { openBox } from "./box-access";
import {
  conflict,
  invalidArgument,
  notFound,
  permissionDenied,
  preconditionFailed,
} from "./errors";
import { decodeIndexKey, encodeIndexKey, type KeyScope } from "./index-key";
import {
  type Box,
  type Caller,
  type CounteragentGroup,
  CounteragentStatus,
  DEFAULT_GROUP_ID,
  HEAD_DEPARTMENT_ID,
} from "./model";
import { type AipPageRequest, cursorOf, pageLengthOf, pagesByToken } from "./paging";
import type { CounteragentGroupStore, CounteragentMembershipStore } from "./ports";
import { CONTROLS, requireId, SPACES } from "./validate";

export const DEFAULT_GROUP_NAME = "Default";
export const MAX_GROUP_NAME_LENGTH = 100;
export const DEFAULT_GROUPS_PAGE = 1;
export const DEFAULT_GROUPS_PAGE_SIZE = 100;
export const MAX_GROUPS_PAGE_SIZE = 100;
/** The largest int32: page numbers beyond it cannot be sent on any protocol. */
const MAX_PAGE = 2_147_483_647;
const MAX_MOVE_ATTEMPTS = 100;

/** Points where tests can widen a race window; none in production. */
export interface CounteragentGroupHooks {
  /** AddCounteragentToGroup: after the group check, before the counteragent is moved. */
  readonly beforeMove?: (move: CounteragentMove) => Promise<void>;
}

export interface CounteragentGroupDeps extends BoxAccessDeps {
  readonly counteragents: CounteragentMembershipStore;
  readonly counteragentGroups: CounteragentGroupStore;
  readonly groupHooks?: CounteragentGroupHooks | undefined;
}

/** A group as the API shows it. */
export interface GroupView {
  readonly counteragentGroupId: string;
  readonly name: string;
  /** undefined: any department (the answer then has no Departments at all). */
  readonly departmentIds: readonly string[] | undefined;
  /** Its entity tag (quoted, RFC 9110 §8.8.3): the same while the group is the same (groupEtag). */
  readonly etag: string;
}

/**
 * What a write of a group requires of the group as it stands (If-Match,
 * RFC 9110 §13.1.1; AIP-154): any group (`*`), or one whose entity tag is
 * one of `etags`, compared strongly (a weak tag never matches). Absent: no
 * condition.
 */
export type GroupPrecondition = { readonly any: true } | { readonly etags: readonly string[] };

export interface GroupRef {
  readonly boxId: string;
  readonly counteragentGroupId: string;
}

export interface DepartmentList {
  readonly departmentIds: readonly string[];
}

export interface GroupToCreate {
  readonly name: string;
  /** Absent or empty: any department. */
  readonly departments?: DepartmentList | undefined;
}

export interface GroupChanges {
  /** Absent: the name stays. */
  readonly name?: string | undefined;
  /** Absent: the departments stay. */
  readonly groupDepartments?:
    | { readonly anyDepartment: boolean; readonly departments?: DepartmentList | undefined }
    | undefined;
}

export interface GroupsPage {
  readonly groups: GroupView[];
  /** Groups of the box over all pages. */
  readonly totalCount: number;
  /** AIP-158: the token of the page after this one, "" at the end of the listing. */
  readonly nextPageToken: string;
}

/**
 * The scope a groups listing's page tokens are sealed to: the box, and no group (a
 * counteragents listing's keys name one, so neither list takes the other's tokens).
 */
const groupsListing = (boxId: string): KeyScope => ({ boxId, counteragentGroupId: "" });

export interface CounteragentMove {
  readonly boxId: string;
  readonly counteragentBoxId: string;
  readonly counteragentGroupId: string;
}

/**
 * The key names are compared by: NFC, then full case mapping (upper, then
 * lower), so that "Straße" and "STRASSE", "ΟΔΟΣ" and "οδοσ" are one name.
 */
export function groupNameKey(name: string): string {
  return name.trim().normalize("NFC").toUpperCase().toLowerCase().normalize("NFC");
}

/** What `trim()` removes: the white-space controls (TAB to CR) and SPACES. */
const TRIMMED = `\\u0009-\\u000D${SPACES}`;

/**
 * The Name rule of `checkGroupName` as an ECMA-262 regular expression (the
 * same in Python's `re` and Rust's `regex`), for the OpenAPI document:
 * trimmable white space around 1 to 100 code points that hold no control
 * character and neither start nor end with white space.
 */
export const GROUP_NAME_PATTERN = `^[${TRIMMED}]*[^${CONTROLS}${SPACES}](?:[^${CONTROLS}]{0,${MAX_GROUP_NAME_LENGTH - 2}}[^${CONTROLS}${SPACES}])?[${TRIMMED}]*$`;

/** 1–100 characters (code points) after trimming, no control character; the trimmed name. */
export function checkGroupName(raw: string): string {
  const name = raw.trim();
  const length = [...name].length;
  if (length === 0 || length > MAX_GROUP_NAME_LENGTH) {
    throw invalidArgument(
      `Name must be 1 to ${MAX_GROUP_NAME_LENGTH} characters after trimming`,
      "CounteragentGroup.InvalidName",
    );
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001F\u007F-\u009F]/.test(name)) {
    throw invalidArgument(
      "Name must not contain control characters",
      "CounteragentGroup.InvalidName",
    );
  }
  return name;
}

export async function createCounteragentGroup(
  deps: CounteragentGroupDeps,
  caller: Caller,
  request: {
    readonly boxId: string;
    readonly group?: GroupToCreate | undefined;
    /** AIP-155: a UUID the client chose for this create; "" or absent: none. */
    readonly requestId?: string | undefined;
  },
): Promise<GroupView> {
  const boxId = requireId("boxId", request.boxId);
  if (!request.group) {
    throw invalidArgument("the group to create is required");
  }
  const requestId = request.requestId ?? "";
  if (requestId !== "" && !UUID.test(requestId)) {
    throw invalidArgument("request_id must be a UUID (AIP-155)");
  }
  const name = checkGroupName(request.group.name);
  const listed = checkDepartmentIds(request.group.departments);
  const { box } = await authorize(deps, caller, boxId);
  requireDepartmentsOf(box, listed);
  const group: CounteragentGroup = {
    boxId,
    counteragentGroupId: requestId === "" ? randomUUID() : groupIdOfRequest(boxId, requestId),
    name,
    departmentIds: listed.length === 0 ? undefined : listed,
    createdAt: deps.now(),
    deletingSince: undefined,
  };
  if (requestId === "") {
    await deps.counteragentGroups.insertGroup(group);
    return viewOf(group);
  }
  // A retry: what the first call created, found by the id the request id gives.
  const earlier = await deps.counteragentGroups.findGroup(boxId, group.counteragentGroupId);
  if (earlier) return retriedCreate(earlier, group);
  try {
    await deps.counteragentGroups.insertGroup(group);
  } catch (error) {
    // Two calls with one request id at once: the one that stored the group answers both.
    const stored = await deps.counteragentGroups.findGroup(boxId, group.counteragentGroupId);
    if (stored) return retriedCreate(stored, group);
    throw error;
  }
  return viewOf(group);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The id of the group a create with `requestId` makes: the same for every retry, and
 * for no other box or request id (a UUID of version 8 from SHA-256 of both).
 */
function groupIdOfRequest(boxId: string, requestId: string): string {
  const hash = createHash("sha256").update(`${boxId}\u0000${requestId.toLowerCase()}`).digest();
  hash[6] = ((hash[6] ?? 0) & 0x0f) | 0x80;
  hash[8] = ((hash[8] ?? 0) & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A create retried with its request id: the group it made, when it asked for the same group (AIP-155). */
function retriedCreate(stored: CounteragentGroup, asked: CounteragentGroup): GroupView {
  if (
    stored.deletingSince === undefined &&
    stored.name === asked.name &&
    sameDepartments(stored.departmentIds, asked.departmentIds)
  ) {
    return viewOf(stored);
  }
  throw conflict(
    stored.deletingSince === undefined
      ? "request_id was used to create another group"
      : "the group this request_id created is being deleted",
    "CounteragentGroup.RequestIdReused",
  );
}

function sameDepartments(
  a: readonly string[] | undefined,
  b: readonly string[] | undefined,
): boolean {
  const left = [...(a ?? [])].sort();
  const right = [...(b ?? [])].sort();
  return left.length === right.length && left.every((id, i) => id === right[i]);
}

/**
 * The fields an update mask may name, by their names with case and underscores ignored
 * (a Map: a path such as "constructor" must name nothing, not an object's own property).
 */
const MASKABLE = new Map<string, readonly (keyof GroupChanges)[]>([
  ["name", ["name"]],
  ["groupdepartments", ["groupDepartments"]],
  ["*", ["name", "groupDepartments"]],
]);

/**
 * AIP-134: the changes an update mask selects. A field it names is written, and
 * cleared when `changes` leaves it out (the departments to any department; a name
 * cannot be cleared); a field it does not name stays as it is, whatever `changes`
 * says. No mask (no paths): `changes` as it is.
 */
function masked(changes: GroupChanges, paths: readonly string[]): GroupChanges {
  if (paths.length === 0) return changes;
  const named = new Set<keyof GroupChanges>();
  for (const path of paths) {
    const fields = MASKABLE.get(path.replaceAll("_", "").toLowerCase());
    if (!fields) {
      throw invalidArgument(
        `update_mask names "${path.slice(0, 64)}", which is no field of the changes: give Name, GroupDepartments or *`,
      );
    }
    for (const field of fields) named.add(field);
  }
  if (named.has("name") && changes.name === undefined) {
    throw invalidArgument("update_mask names Name, which cannot be cleared: give the new Name");
  }
  return {
    name: named.has("name") ? changes.name : undefined,
    groupDepartments: named.has("groupDepartments")
      ? (changes.groupDepartments ?? { anyDepartment: true })
      : undefined,
  };
}

export async function updateCounteragentGroup(
  deps: CounteragentGroupDeps,
  caller: Caller,
  request: GroupRef & {
    readonly changes?: GroupChanges | undefined;
    readonly ifMatch?: GroupPrecondition | undefined;
    /** AIP-134's update_mask: the fields of `changes` to write; absent or empty: what `changes` carries. */
    readonly updateMask?: readonly string[] | undefined;
  },
): Promise<GroupView> {
  const ref = checkStoredGroupRef(request, "changed");
  const changes = masked(request.changes ?? {}, request.updateMask ?? []);
  const name = changes.name === undefined ? undefined : checkGroupName(changes.name);
  let departmentIds: string[] | null | undefined;
  const patch = changes.groupDepartments;
  if (patch) {
    const listed = checkDepartmentIds(patch.departments);
    if (patch.anyDepartment && listed.length > 0) {
      throw invalidArgument(
        "AnyDepartment is true: Departments must not list departments",
        "CounteragentGroup.InvalidDepartments",
      );
    }
    if (!patch.anyDepartment && listed.length === 0) {
      throw invalidArgument(
        "AnyDepartment is false: Departments must list at least one department",
        "CounteragentGroup.InvalidDepartments",
      );
    }
    departmentIds = patch.anyDepartment ? null : listed;
  }
  const { box } = await authorize(deps, caller, ref.boxId);
  requireDepartmentsOf(box, departmentIds ?? []);
  // With If-Match, the write happens only to the group as the caller saw it: one
  // conditional update on the fields its entity tag stands for.
  const expected = await expectedGroup(deps, ref, request.ifMatch);
  if (name !== undefined || departmentIds !== undefined) {
    const changed = await deps.counteragentGroups.updateGroup(
      ref.boxId,
      ref.counteragentGroupId,
      {
        // Stryker disable next-line ConditionalExpression: the store sets only the fields that hold a value
        ...(name === undefined ? {} : { name }),
        // Stryker disable next-line ConditionalExpression: the same
        ...(departmentIds === undefined ? {} : { departmentIds }),
      },
      expected,
    );
    if (!changed) {
      // Gone (404), or changed since it was read (412: the caller's tag is stale).
      const now = await findLiveGroup(deps, ref);
      if (expected) throw staleEtag(now);
      // Stryker disable next-line all: not reached; the group was found live just now
      throw groupNotFound(ref.counteragentGroupId);
    }
  }
  return viewOf(await findLiveGroup(deps, ref));
}

/**
 * The group's entity tag: a hash of what the API shows of it (id, name,
 * departments), so equal for equal groups and different after any change
 * the API can see. Strong: the bytes of every representation follow from
 * these fields.
 */
export function groupEtag(group: {
  readonly counteragentGroupId: string;
  readonly name: string;
  readonly departmentIds: readonly string[] | undefined;
}): string {
  const shown = JSON.stringify([
    group.counteragentGroupId,
    group.name,
    group.departmentIds ?? null,
  ]);
  return `"${createHash("sha256").update(shown).digest("base64url").slice(0, 27)}"`;
}

/**
 * The live group as the precondition requires it (for the conditional write),
 * or undefined when there is no precondition. 404 when there is no such group;
 * 412 when its tag is none of the caller's.
 */
async function expectedGroup(
  deps: CounteragentGroupDeps,
  ref: GroupRef,
  ifMatch: GroupPrecondition | undefined,
): Promise<CounteragentGroup | undefined> {
  if (!ifMatch) return undefined;
  const group = await findLiveGroup(deps, ref);
  if ("etags" in ifMatch && !ifMatch.etags.includes(groupEtag(group))) throw staleEtag(group);
  return group;
}

const staleEtag = (group: CounteragentGroup) =>
  preconditionFailed(
    `the counteragent group changed: its entity tag is now ${groupEtag(group)}`,
    "CounteragentGroup.EtagMismatch",
  );

/** Moves every member to the default group, then removes the group (see the top of this file). */
export async function deleteCounteragentGroup(
  deps: CounteragentGroupDeps,
  caller: Caller,
  request: GroupRef & { readonly ifMatch?: GroupPrecondition | undefined },
): Promise<void> {
  const ref = checkStoredGroupRef(request, "deleted");
  const { boxId, counteragentGroupId } = ref;
  await authorize(deps, caller, boxId);
  if (request.ifMatch) {
    // Only the group as the caller saw it is deleted: the mark is conditional on it.
    const expected = (await expectedGroup(deps, ref, request.ifMatch)) as CounteragentGroup;
    const marked = await deps.counteragentGroups.markDeleting(
      boxId,
      counteragentGroupId,
      deps.now(),
      expected,
    );
    if (!marked) throw staleEtag(await findLiveGroup(deps, ref));
  }
  const group = await deps.counteragentGroups.findGroup(boxId, counteragentGroupId);
  if (!group) {
    throw groupNotFound(counteragentGroupId);
  }
  // Already marked: an earlier Delete stopped half-way (or one runs now); finish the job all the same.
  // Stryker disable next-line ConditionalExpression: marking again only moves deletingSince of a group removed below
  if (group.deletingSince === undefined) {
    await deps.counteragentGroups.markDeleting(boxId, counteragentGroupId, deps.now());
  }
  await deps.counteragents.moveAllMembers(boxId, counteragentGroupId, DEFAULT_GROUP_ID, deps.now());
  await deps.counteragentGroups.removeGroup(boxId, counteragentGroupId);
}

export async function getCounteragentGroup(
  deps: CounteragentGroupDeps,
  caller: Caller,
  request: GroupRef,
): Promise<GroupView> {
  const ref = {
    boxId: requireId("boxId", request.boxId),
    counteragentGroupId: requireId("counteragentGroupId", request.counteragentGroupId),
  };
  await authorize(deps, caller, ref.boxId);
  if (ref.counteragentGroupId === DEFAULT_GROUP_ID) return DEFAULT_GROUP_VIEW;
  return viewOf(await findLiveGroup(deps, ref));
}

export async function getCounteragentGroups(
  deps: CounteragentGroupDeps,
  caller: Caller,
  request: AipPageRequest & {
    readonly boxId: string;
    readonly page?: number | undefined;
    readonly count?: number | undefined;
  },
): Promise<GroupsPage> {
  const boxId = requireId("boxId", request.boxId);
  const count = pageLengthOf(request, DEFAULT_GROUPS_PAGE_SIZE, MAX_GROUPS_PAGE_SIZE);
  const byToken = pagesByToken(request);
  if (byToken && request.page !== undefined) {
    throw invalidArgument("give page_size and page_token, or page, not both");
  }
  const page = request.page ?? DEFAULT_GROUPS_PAGE;
  if (!Number.isInteger(page) || page < 1 || page > MAX_PAGE) {
    throw invalidArgument("page must be an integer from 1");
  }
  const scope = groupsListing(boxId);
  const token = cursorOf(request.pageToken, request.page, "page");
  const after = token === undefined ? undefined : decodeIndexKey(scope, token, "page_token");
  await authorize(deps, caller, boxId);
  const store = deps.counteragentGroups;
  // One more than the page: whether another page follows. A box has few groups
  // (docs/api.md §7): the legacy page is an offset; a page token is the keyset.
  const [read, totalCount] = await Promise.all([
    byToken
      ? store.listGroupsAfter(
          boxId,
          after && {
            createdAt: after.position.joinedGroupAt,
            counteragentGroupId: after.position.counteragentBoxId,
          },
          count + 1,
        )
      : store.listGroups(boxId, (page - 1) * count, count + 1),
    store.countGroups(boxId),
  ]);
  const groups = read.slice(0, count);
  const last = groups.at(-1);
  const nextPageToken =
    read.length > count && last
      ? encodeIndexKey(
          scope,
          { joinedGroupAt: last.createdAt, counteragentBoxId: last.counteragentGroupId },
          totalCount,
        )
      : "";
  return { groups: groups.map(viewOf), totalCount, nextPageToken };
}

/** Moves a counteragent into a group; see the top of this file for the race with Delete. */
export async function addCounteragentToGroup(
  deps: CounteragentGroupDeps,
  caller: Caller,
  request: CounteragentMove,
): Promise<void> {
  const move: CounteragentMove = {
    boxId: requireId("boxId", request.boxId),
    counteragentBoxId: requireId("counteragentBoxId", request.counteragentBoxId),
    counteragentGroupId: requireId("counteragentGroupId", request.counteragentGroupId),
  };
  const { boxId, counteragentBoxId, counteragentGroupId: target } = move;
  await authorize(deps, caller, boxId);
  const isDefault = target === DEFAULT_GROUP_ID;
  if (!isDefault) {
    await findLiveGroup(deps, move);
  }
  for (let attempt = 1; ; attempt++) {
    const counteragent = await deps.counteragents.findCounteragent(boxId, counteragentBoxId);
    if (!counteragent) {
      throw notFound(`the box has no counteragent "${counteragentBoxId}"`, "Counteragent.NotFound");
    }
    if (counteragent.status !== CounteragentStatus.IsMyCounteragent) {
      throw conflict(
        `the counteragent's status is ${counteragent.status}, not IsMyCounteragent`,
        "Counteragent.NotMyCounteragent",
      );
    }
    if (counteragent.counteragentGroupId === target) {
      return;
    }
    // Stryker disable next-line OptionalChaining: a test hook; production passes none
    await deps.groupHooks?.beforeMove?.(move);
    const moved = await deps.counteragents.moveCounteragent(boxId, counteragentBoxId, {
      from: counteragent.counteragentGroupId,
      to: target,
      joinedGroupAt: deps.now(),
      status: CounteragentStatus.IsMyCounteragent,
    });
    if (moved) break;
    if (attempt >= MAX_MOVE_ATTEMPTS) {
      throw conflict(
        "the counteragent is being changed by other calls; try again",
        "Counteragent.ConcurrentChange",
      );
    }
    // Lost a race: back off a little, with jitter, and decide again on fresh state.
    // Stryker disable next-line ArithmeticOperator: the back-off's length; only timing changes
    await sleep(Math.random() * Math.min(50, 2 ** attempt));
  }
  if (isDefault) {
    return;
  }
  // The group may have begun to be deleted after the check above, its members moved before this write.
  const group = await deps.counteragentGroups.findGroup(boxId, target);
  if (!group || group.deletingSince !== undefined) {
    await deps.counteragents.moveCounteragent(boxId, counteragentBoxId, {
      from: target,
      to: DEFAULT_GROUP_ID,
      joinedGroupAt: deps.now(),
    });
    throw groupNotFound(target);
  }
}

/** Administrators of the box with CanManageCounteragents (docs/api.md §6.4). */
async function authorize(deps: CounteragentGroupDeps, caller: Caller, boxId: string) {
  const access = await openBox(deps, caller, boxId);
  if (!access.self.isAdministrator || !access.self.canManageCounteragents) {
    throw permissionDenied(
      "only an administrator of the box with CanManageCounteragents may manage counteragent groups",
    );
  }
  return access;
}

/** A group that Update or Delete may address: a valid id, and not the default group. */
function checkStoredGroupRef(request: GroupRef, what: "changed" | "deleted"): GroupRef {
  const ref = {
    boxId: requireId("boxId", request.boxId),
    counteragentGroupId: requireId("counteragentGroupId", request.counteragentGroupId),
  };
  if (ref.counteragentGroupId === DEFAULT_GROUP_ID) {
    throw invalidArgument(`the default group cannot be ${what}`, "CounteragentGroup.DefaultGroup");
  }
  return ref;
}

/** Valid department ids, each once, in the order first listed. */
function checkDepartmentIds(list: DepartmentList | undefined): string[] {
  const ids = new Set<string>();
  for (const id of list?.departmentIds ?? []) {
    ids.add(requireId("DepartmentIds", id));
  }
  return [...ids];
}

/** Every department must be one of the box (decided after the rights: it tells about the box). */
function requireDepartmentsOf(box: Box, departmentIds: readonly string[]): void {
  const known = new Set([HEAD_DEPARTMENT_ID, ...box.departments.map((d) => d.departmentId)]);
  const unknown = departmentIds.find((id) => !known.has(id));
  if (unknown !== undefined) {
    throw invalidArgument(
      `the box has no department "${unknown}"`,
      "CounteragentGroup.UnknownDepartment",
    );
  }
}

async function findLiveGroup(
  deps: CounteragentGroupDeps,
  ref: GroupRef,
): Promise<CounteragentGroup> {
  const group = await deps.counteragentGroups.findGroup(ref.boxId, ref.counteragentGroupId);
  if (!group || group.deletingSince !== undefined) {
    throw groupNotFound(ref.counteragentGroupId);
  }
  return group;
}

const groupNotFound = (counteragentGroupId: string) =>
  notFound(
    `the box has no counteragent group "${counteragentGroupId}"`,
    "CounteragentGroup.NotFound",
  );

const DEFAULT_GROUP_SHOWN = {
  counteragentGroupId: DEFAULT_GROUP_ID,
  name: DEFAULT_GROUP_NAME,
  departmentIds: undefined,
};
const DEFAULT_GROUP_VIEW: GroupView = {
  ...DEFAULT_GROUP_SHOWN,
  etag: groupEtag(DEFAULT_GROUP_SHOWN),
};

function viewOf(group: CounteragentGroup): GroupView {
  return {
    counteragentGroupId: group.counteragentGroupId,
    name: group.name,
    departmentIds: group.departmentIds,
    etag: groupEtag(group),
  };
}

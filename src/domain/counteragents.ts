/** GetCounteragentsFromGroup (docs/api.md §6.2): keyset paging over a group's counteragents. */
import type { BoxAccessDeps } from "./box-access";
import { openBox } from "./box-access";
import { notFound, permissionDenied } from "./errors";
import { decodeIndexKey, encodeIndexKey } from "./index-key";
import { type Caller, CounteragentStatus, DEFAULT_GROUP_ID } from "./model";
import { type AipPageRequest, cursorOf, pageLengthOf } from "./paging";
import type { CounteragentStore } from "./ports";
import { requireId } from "./validate";

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 100;

export interface CounteragentDeps extends BoxAccessDeps {
  readonly counteragents: CounteragentStore;
}

export interface GroupPageRequest extends AipPageRequest {
  readonly boxId: string;
  readonly counteragentGroupId: string;
  readonly afterIndexKey?: string | undefined;
  /** Absent: 100. */
  readonly count?: number | undefined;
}

export interface GroupPage {
  readonly counteragentBoxIds: string[];
  /** Members of the group with status IsMyCounteragent, over all pages, as counted when the walk started. */
  readonly totalCount: number;
  /** Key of the last item; undefined only when the page is empty. */
  readonly afterIndexKey: string | undefined;
  /** AIP-158: the same key when more counteragents follow, "" at the end of the listing. */
  readonly nextPageToken: string;
}

export async function getCounteragentsFromGroup(
  deps: CounteragentDeps,
  caller: Caller,
  request: GroupPageRequest,
): Promise<GroupPage> {
  const scope = {
    boxId: requireId("boxId", request.boxId),
    counteragentGroupId: requireId("counteragentGroupId", request.counteragentGroupId),
  };
  const count = pageLengthOf(request, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
  // A page token is the same key as afterIndexKey (sealed to the box and group).
  const token = cursorOf(request.pageToken, request.afterIndexKey, "afterIndexKey");
  // The key is judged only by decodeIndexKey: it is longer than an identifier may be.
  const key = token ?? request.afterIndexKey;
  const after =
    key === undefined || key === ""
      ? undefined
      : decodeIndexKey(scope, key, token === undefined ? "afterIndexKey" : "page_token");

  const { self } = await openBox(deps, caller, scope.boxId);
  if (!self.isAdministrator || !self.canManageCounteragents) {
    throw permissionDenied(
      "only an administrator of the box with CanManageCounteragents may list counteragents",
    );
  }
  const { boxId, counteragentGroupId } = scope;
  const status = CounteragentStatus.IsMyCounteragent;
  const store = deps.counteragents;
  // TotalCount is counted once per walk (docs/api.md §6.2): on the first page, which
  // carries it in every key it issues; a later page reports the key's total and
  // costs one bounded index scan. A key of an earlier version carries no total:
  // that page counts again (and gives listing keys to members without one, as a
  // first page does), and the keys it issues carry the new total.
  if (after !== undefined && after.totalCount === undefined) {
    await store.ensureListingKeys(boxId, counteragentGroupId, status);
  }
  // One more than the page: whether another page follows (next_page_token is empty at the end).
  const [read, totalCount] = await Promise.all([
    store.listMembers(boxId, counteragentGroupId, status, after?.position, count + 1),
    after?.totalCount ?? store.countMembers(boxId, counteragentGroupId, status),
  ]);
  const page = read.length > count ? read.slice(0, count) : read;
  // A member never points at a group that does not exist (docs/api.md §6.4), so only
  // an empty page needs the group itself looked up: one round trip fewer.
  const exists =
    page.length > 0 ||
    counteragentGroupId === DEFAULT_GROUP_ID ||
    (await store.groupExists(boxId, counteragentGroupId));
  if (!exists) {
    throw notFound(
      `the box has no counteragent group "${counteragentGroupId}"`,
      "CounteragentGroup.NotFound",
    );
  }
  const last = page.at(-1);
  const afterIndexKey = last ? encodeIndexKey(scope, last, totalCount) : undefined;
  return {
    counteragentBoxIds: page.map((m) => m.counteragentBoxId),
    totalCount,
    afterIndexKey,
    nextPageToken: read.length > count ? (afterIndexKey ?? "") : "",
  };
}

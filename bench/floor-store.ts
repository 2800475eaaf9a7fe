/**
 * The uncached floor's work per call: the MongoDB reads and writes an
 * uncached service makes (same collections, filters and parallelism as
 * src/storage, but every credential, rights and box lookup on every call and
 * a count on every page), with the same checks and no framework around them.
 * The tight baseline (tight-store.ts) makes exactly the service's calls
 * instead. Answers are plain values; the floors encode them.
 */
import { createHash } from "node:crypto";
import { type CommandStartedEvent, type Db, MongoClient } from "mongodb";
import { encodeIndexKey } from "../src/domain/index-key";
import { CounteragentStatus } from "../src/domain/model";
import { SUBSCRIPTION_CATALOG } from "../src/domain/subscriptions";
import type { BoxDocument } from "../src/storage/box-store";
import { Collections } from "../src/storage/collections";
import type { CounteragentGroupDocument } from "../src/storage/counteragent-group-store";
import {
  type CounteragentDocument,
  LISTING_INDEX,
  pageFilter,
  pageKeys,
} from "../src/storage/counteragent-store";
import type { ApiClientDocument, TokenDocument } from "../src/storage/credential-store";
import type { EmployeeDocument } from "../src/storage/employee-store";
import { positionOfListingKey } from "../src/storage/listing-key";

/** A refused call: the status the floor answers with. */
export class FloorError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface GroupPage {
  readonly ids: string[];
  readonly totalCount: number;
  readonly afterIndexKey: string | undefined;
  /** AIP-158: the key when more follow, "" at the end (the RPC protocols answer it; the legacy paths do not). */
  readonly nextPageToken: string;
}

export interface SubscriptionView {
  readonly id: string;
  readonly isSubscribed: boolean;
}

export interface FloorStore {
  getGroupPage(
    authorization: string | undefined,
    boxId: string,
    groupId: string,
    count: number,
  ): Promise<GroupPage>;
  getSubscriptions(
    authorization: string | undefined,
    boxId: string,
    userId: string,
  ): Promise<SubscriptionView[]>;
  updateSubscriptions(
    authorization: string | undefined,
    boxId: string,
    userId: string,
    changes: Readonly<Record<string, boolean>>,
  ): Promise<SubscriptionView[]>;
  /** Database commands sent so far (command monitoring; the driver's housekeeping left out). */
  commands(): number;
  close(): Promise<void>;
}

/** Database commands the driver sent, by command monitoring (as the service's metrics count them). */
export const countsCommand = (event: CommandStartedEvent) => !UNCOUNTED.has(event.commandName);
/** The driver's own housekeeping, not a call's round trip. */
const UNCOUNTED: ReadonlySet<string> = new Set(["hello", "isMaster", "ping", "endSessions"]);

const AUTH = /svcauth_api_client_id=([^,\s]+)\s*,\s*svcauth_token=([^,\s]+)/;
const DEFAULT_GROUP_ID = "00000000-0000-0000-0000-000000000000";

const sha256 = (secret: string) => createHash("sha256").update(secret, "utf8").digest("hex");

/**
 * The uncached floor: the round trips an uncached service made (every lookup
 * on every call, a count on every page). Connects the way the service does
 * (src/storage/database.ts).
 */
export async function openFloorStore(uri: string, name: string): Promise<FloorStore> {
  let commands = 0;
  const client = new MongoClient(uri, {
    serverSelectionTimeoutMS: 5_000,
    appName: "bench-floor",
    monitorCommands: true,
  });
  client.on("commandStarted", (event) => {
    if (countsCommand(event)) commands++;
  });
  await client.connect();
  return createFloorStore(
    client.db(name),
    () => commands,
    () => client.close(),
  );
}

function createFloorStore(db: Db, commands: () => number, close: () => Promise<void>): FloorStore {
  const apiClients = db.collection<ApiClientDocument>(Collections.apiClients);
  const tokens = db.collection<TokenDocument>(Collections.tokens);
  const boxes = db.collection<BoxDocument>(Collections.boxes);
  const employees = db.collection<EmployeeDocument>(Collections.employees);
  const groups = db.collection<CounteragentGroupDocument>(Collections.counteragentGroups);
  const counteragents = db.collection<CounteragentDocument>(Collections.counteragents);

  /** API client and token, in parallel: the caller's user id. */
  const authenticate = async (authorization: string | undefined): Promise<string> => {
    const match = AUTH.exec(authorization ?? "");
    if (!match?.[1] || !match[2]) throw new FloorError(401, "no credentials");
    const [client, token] = await Promise.all([
      apiClients.findOne({ _id: sha256(match[1]) }),
      tokens.findOne({ _id: sha256(match[2]) }),
    ]);
    if (!client?.enabled) throw new FloorError(401, "unknown API client");
    if (!token || new Date(token.expiresAt).getTime() <= Date.now()) {
      throw new FloorError(401, "unknown token");
    }
    return token.userId;
  };

  /** The caller's employee record and the box, in parallel (src/domain/box-access.ts). */
  const openBox = async (userId: string, boxId: string): Promise<EmployeeDocument> => {
    const [self, box] = await Promise.all([
      employees.findOne({ boxId, userId }),
      boxes.findOne({ _id: boxId, boxId }),
    ]);
    if (!self || !box) throw new FloorError(403, "no access to the box");
    if (box.apiSubscriptionEndsAt && new Date(box.apiSubscriptionEndsAt).getTime() <= Date.now()) {
      throw new FloorError(402, "subscription ended");
    }
    return self;
  };

  const authorizeEmployee = async (
    authorization: string | undefined,
    boxId: string,
    userId: string,
  ): Promise<EmployeeDocument> => {
    const callerId = await authenticate(authorization);
    const self = await openBox(callerId, boxId);
    if (self.isAdministrator !== true && self.userId !== userId) {
      throw new FloorError(403, "not an administrator");
    }
    return self;
  };

  const view = (employee: EmployeeDocument): SubscriptionView[] =>
    SUBSCRIPTION_CATALOG.map((id) => ({
      id,
      isSubscribed: employee.subscriptions?.[id] ?? true,
    }));

  return {
    async getGroupPage(authorization, boxId, groupId, count) {
      const callerId = await authenticate(authorization);
      const self = await openBox(callerId, boxId);
      if (self.isAdministrator !== true || self.canManageCounteragents !== true) {
        throw new FloorError(403, "not allowed");
      }
      const status = CounteragentStatus.IsMyCounteragent;
      const [exists, page, totalCount] = await Promise.all([
        groupId === DEFAULT_GROUP_ID
          ? Promise.resolve(true)
          : groups.findOne({ boxId, counteragentGroupId: groupId }).then((g) => g !== null),
        // One more than the page, as the service reads: whether more follow.
        pageKeys(counteragents, pageFilter(boxId, groupId, status, undefined), count + 1).then(
          (keys) => keys.flatMap((key) => positionOfListingKey(key) ?? []),
        ),
        counteragents.countDocuments(
          { boxId, counteragentGroupId: groupId, status },
          { hint: LISTING_INDEX },
        ),
      ]);
      if (!exists) throw new FloorError(404, "no such group");
      const shown = page.slice(0, count);
      const last = shown.at(-1);
      const afterIndexKey = last
        ? encodeIndexKey({ boxId, counteragentGroupId: groupId }, last, totalCount)
        : undefined;
      return {
        ids: shown.map((d) => d.counteragentBoxId),
        totalCount,
        afterIndexKey,
        nextPageToken: page.length > count ? (afterIndexKey ?? "") : "",
      };
    },

    async getSubscriptions(authorization, boxId, userId) {
      const self = await authorizeEmployee(authorization, boxId, userId);
      const target = self.userId === userId ? self : await employees.findOne({ boxId, userId });
      if (!target) throw new FloorError(404, "no such employee");
      return view(target);
    },

    async updateSubscriptions(authorization, boxId, userId, changes) {
      await authorizeEmployee(authorization, boxId, userId);
      const set: Record<string, boolean> = {};
      for (const [id, value] of Object.entries(changes)) {
        set[`subscriptions.${id}`] = value;
      }
      const result = await employees.updateOne({ boxId, userId }, { $set: set });
      if (result.matchedCount === 0) throw new FloorError(404, "no such employee");
      const target = await employees.findOne({ boxId, userId });
      if (!target) throw new FloorError(404, "no such employee");
      return view(target);
    },

    commands,
    close,
  };
}

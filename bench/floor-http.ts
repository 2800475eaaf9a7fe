/**
 * The benchmark's HTTP floor: a plain node:http server making the service's
 * MongoDB calls (floor-store.ts) and writing the same bytes the service
 * writes, for the legacy GetCounteragentsFromGroup (JSON and protobuf),
 * GetSubscriptions, UpdateSubscriptions and the Connect binary route of
 * GetCounteragentsFromGroup. Nothing else: no routing table, no interceptors,
 * no logging. FLOOR=tight makes exactly the service's calls (tight-store.ts),
 * FLOOR=uncached those of an uncached service (floor-store.ts). Run as a child
 * of `npm run bench` (env MONGODB_URI, MONGODB_DB, PORT, FLOOR); prints
 * "commands on http://…" (GET: the database commands sent so far) and
 * "listening on http://…" on stderr.
 */
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { GetCounteragentsFromGroupRequestSchema } from "../gen/docflow/api/v1/counteragents_pb";
import { CounteragentFromGroupResponseSchema } from "../gen/docflow/legacy/counteragents_pb";
import { isSubscriptionId } from "../src/domain/subscriptions";
import { CONNECT_PATH } from "./fixture";
import { FloorError, type GroupPage, type SubscriptionView } from "./floor-store";
import { COMMANDS_PATH, openStore } from "./floors";

const JSON_TYPE = "application/json; charset=utf-8";

async function main(): Promise<void> {
  const uri = process.env.MONGODB_URI;
  const name = process.env.MONGODB_DB;
  if (!uri || !name) throw new Error("MONGODB_URI and MONGODB_DB are required");
  const store = await openStore(uri, name);

  /** The page in binary; Connect (`rpc`) also carries next_page_token, the legacy path never. */
  const pageBinary = (page: GroupPage, rpc = false) =>
    toBinary(
      CounteragentFromGroupResponseSchema,
      create(CounteragentFromGroupResponseSchema, {
        CounteragentBoxId: page.ids,
        TotalCount: page.totalCount,
        ...(page.afterIndexKey === undefined ? {} : { AfterIndexKey: page.afterIndexKey }),
        ...(rpc && page.nextPageToken !== "" ? { nextPageToken: page.nextPageToken } : {}),
      }),
    );
  const pageJson = (page: GroupPage) =>
    JSON.stringify({
      CounteragentBoxId: page.ids,
      TotalCount: page.totalCount,
      AfterIndexKey: page.afterIndexKey,
    });
  const subscriptionsJson = (list: SubscriptionView[]) =>
    JSON.stringify({
      Subscriptions: list.map((s) => ({ Id: s.id, IsSubscribed: String(s.isSubscribed) })),
    });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://floor");
    const q = url.searchParams;
    const auth = req.headers.authorization;
    const asJson = /application\/json/i.test(req.headers.accept ?? "");
    switch (`${req.method} ${url.pathname}`) {
      case "GET /readyz":
        // --overload probes it as it probes the service's.
        req.resume();
        send(res, JSON_TYPE, '{"status":"ok"}');
        return;
      case `GET ${COMMANDS_PATH}`:
        req.resume();
        send(res, "text/plain", String(store.commands()));
        return;
      case "GET /GetCounteragentsFromGroup": {
        req.resume();
        const page = await store.getGroupPage(
          auth,
          q.get("boxId") ?? "",
          q.get("counteragentGroupId") ?? "",
          Number(q.get("count") ?? 100),
        );
        if (asJson) send(res, JSON_TYPE, pageJson(page));
        else send(res, "application/x-protobuf", pageBinary(page));
        return;
      }
      case "GET /GetSubscriptions": {
        req.resume();
        const list = await store.getSubscriptions(
          auth,
          q.get("boxId") ?? "",
          q.get("userId") ?? "",
        );
        send(res, JSON_TYPE, subscriptionsJson(list));
        return;
      }
      case "POST /UpdateSubscriptions": {
        const changes = parseChanges(await readBody(req));
        const list = await store.updateSubscriptions(
          auth,
          q.get("boxId") ?? "",
          q.get("userId") ?? "",
          changes,
        );
        send(res, JSON_TYPE, subscriptionsJson(list));
        return;
      }
      case `POST ${CONNECT_PATH}`: {
        const request = fromBinary(GetCounteragentsFromGroupRequestSchema, await readBody(req));
        const page = await store.getGroupPage(
          auth,
          request.boxId,
          request.counteragentGroupId,
          request.count ?? 100,
        );
        send(res, "application/proto", pageBinary(page, true));
        return;
      }
      default:
        req.resume();
        throw new FloorError(404, "no such path");
    }
  };

  const server = http.createServer({ keepAliveTimeout: 5_000 }, (req, res) => {
    handle(req, res).catch((error: unknown) => {
      const status = error instanceof FloorError ? error.status : 500;
      send(
        res,
        "text/plain; charset=utf-8",
        error instanceof Error ? error.message : "error",
        status,
      );
    });
  });
  await new Promise<void>((resolve) =>
    server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", resolve),
  );
  const { port } = server.address() as AddressInfo;
  process.stderr.write(
    `floor-http commands on http://127.0.0.1:${port}${COMMANDS_PATH}\nfloor-http listening on http://127.0.0.1:${port}\n`,
  );

  const stop = () => {
    server.close();
    server.closeAllConnections();
    void store.close().finally(() => process.exit(0));
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

function send(res: ServerResponse, type: string, body: string | Uint8Array, status = 200): void {
  const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : body;
  res.writeHead(status, { "content-type": type, "content-length": bytes.length });
  res.end(bytes);
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The legacy JSON body of UpdateSubscriptions: Ids checked, "true"/"false" or booleans. */
function parseChanges(body: Buffer): Record<string, boolean> {
  const parsed = JSON.parse(body.toString("utf8")) as {
    Subscriptions?: { Id?: unknown; IsSubscribed?: unknown }[];
  };
  const changes: Record<string, boolean> = {};
  for (const s of parsed.Subscriptions ?? []) {
    const id = typeof s.Id === "string" ? s.Id : "";
    const value = s.IsSubscribed;
    if (!isSubscriptionId(id) || Object.hasOwn(changes, id)) {
      throw new FloorError(400, "bad subscription Id");
    }
    if (value !== true && value !== false && value !== "true" && value !== "false") {
      throw new FloorError(400, "IsSubscribed is required");
    }
    changes[id] = value === true || value === "true";
  }
  return changes;
}

main().catch((error: unknown) => {
  process.stderr.write(`floor-http failed: ${error instanceof Error ? error.message : error}\n`);
  process.exit(1);
});

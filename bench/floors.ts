/** What the two floors share: which store they run on, and how they tell their command count. */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { type FloorStore, openFloorStore } from "./floor-store";
import { openTightStore } from "./tight-store";

export const COMMANDS_PATH = "/_bench/commands";

/** FLOOR=tight (the default) or uncached. */
export function openStore(uri: string, name: string): Promise<FloorStore> {
  const kind = process.env.FLOOR ?? "tight";
  if (kind === "tight") return openTightStore(uri, name);
  if (kind === "uncached") return openFloorStore(uri, name);
  throw new Error(`FLOOR must be tight or uncached (got "${kind}")`);
}

/** A side port answering GET /_bench/commands with the store's command count (the gRPC floor). */
export async function serveCommandCount(
  store: FloorStore,
): Promise<{ url: string; close: () => void }> {
  const server = http.createServer((req, res) => {
    req.resume();
    const body = String(store.commands());
    res.writeHead(req.url === COMMANDS_PATH ? 200 : 404, { "content-type": "text/plain" });
    res.end(req.url === COMMANDS_PATH ? body : "");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}${COMMANDS_PATH}`, close: () => server.close() };
}

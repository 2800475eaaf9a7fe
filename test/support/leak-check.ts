/**
 * After each test file: no server, socket, child process or database server
 * of the file may still be open (STYLE.md: tests fail when a client, a
 * session or a cursor is left open).
 */
import { afterAll, expect } from "vitest";

/** Resource kinds a test file itself opens; the runner's own pipes and timers are not counted. */
const LEAKABLE = new Set(["TCPServerWrap", "TCPSocketWrap", "ProcessWrap", "Http2Session"]);

afterAll(async () => {
  const open = () => process.getActiveResourcesInfo().filter((r) => LEAKABLE.has(r));
  // Sockets closed in the last hook may need a turn of the event loop to go away.
  for (let i = 0; i < 20 && open().length > 0; i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
  expect(open(), "handles left open by this test file").toEqual([]);
});

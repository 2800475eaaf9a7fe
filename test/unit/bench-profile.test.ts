/**
 * The bench's profile reader (bench/profile.ts) on a profile made
 * by hand: self time and allocations by place, idle left out, folded
 * stacks and a flame graph that hold every sampled frame, time by the file
 * of ours that owns it.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { allocationsByPlace, summarizeProfile } from "../../bench/profile";

const ROOT = "/repo";
const frame = (functionName: string, url = "", lineNumber = 0) => ({
  functionName,
  url,
  lineNumber,
  columnNumber: 0,
  scriptId: "0",
});

/** root → (idle); root → handle (ours) → encode (a package) and → (garbage collector). */
function profileFile(): string {
  const dir = mkdtempSync(join(os.tmpdir(), "bench-profile-"));
  const file = join(dir, "p.cpuprofile");
  const nodes = [
    { id: 1, callFrame: frame("(root)"), children: [2, 3, 5] },
    { id: 2, callFrame: frame("(idle)"), children: [] },
    { id: 3, callFrame: frame("handle", "file:///repo/src/http/front.ts", 9), children: [4] },
    {
      id: 4,
      callFrame: frame("encode", "file:///repo/node_modules/@scope/pkg/dist/index.js", 1),
      children: [],
    },
    { id: 5, callFrame: frame("(garbage collector)"), children: [] },
  ];
  // 6 idle samples, 1 in handle itself, 2 in encode, 1 in GC: 4 busy samples.
  const samples = [2, 2, 2, 3, 4, 4, 5, 2, 2, 2];
  writeFileSync(file, JSON.stringify({ nodes, startTime: 0, endTime: 10_000, samples }));
  return file;
}

describe("the bench's profile reader", () => {
  it("shares busy samples by place and by frame, idle left out", () => {
    const summary = summarizeProfile(profileFile(), ROOT, "a title");
    expect([...summary.byPlace.entries()]).toEqual([
      ["@scope/pkg", 0.5],
      ["src/http/front.ts", 0.25],
      ["(garbage collector)", 0.25],
    ]);
    expect(summary.topFrames[0]).toMatchObject({
      share: 0.5,
      frame: { name: "encode", where: "node_modules/@scope/pkg/dist/index.js:2" },
    });
    expect(summary.topFrames.map((f) => f.frame.name)).not.toContain("(idle)");
  });

  it("folds the sampled stacks, and draws every frame of them", () => {
    const summary = summarizeProfile(profileFile(), ROOT, "a <title> & more");
    expect(summary.folded.trim().split("\n").sort()).toEqual([
      "(garbage collector) 1",
      "handle (src/http/front.ts:10) 1",
      "handle (src/http/front.ts:10);encode (node_modules/@scope/pkg/dist/index.js:2) 2",
    ]);
    expect(summary.svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(summary.svg).toContain("a &lt;title&gt; &amp; more");
    expect(summary.svg).toContain(
      "<title>encode (node_modules/@scope/pkg/dist/index.js:2) — 50.0 %</title>",
    );
    expect(summary.svg).toContain("<title>all — 100.0 %</title>");
    expect(summary.svg).not.toContain("(idle)");
  });

  it("gives a file of ours the time of what it calls outside our code, not of our code it calls", () => {
    const dir = mkdtempSync(join(os.tmpdir(), "bench-profile-"));
    const file = join(dir, "owners.cpuprofile");
    // root → handle (front.ts) → encode (a package) → enter (admission.ts) → get (a package);
    // root → (garbage collector).
    const nodes = [
      { id: 1, callFrame: frame("(root)"), children: [2, 6] },
      { id: 2, callFrame: frame("handle", "file:///repo/src/http/front.ts"), children: [3] },
      { id: 3, callFrame: frame("encode", "file:///repo/node_modules/pkg/i.js"), children: [4] },
      {
        id: 4,
        callFrame: frame("enter", "file:///repo/src/admission/admission.ts"),
        children: [5],
      },
      { id: 5, callFrame: frame("get", "file:///repo/node_modules/pkg/i.js"), children: [] },
      { id: 6, callFrame: frame("(garbage collector)"), children: [] },
    ];
    // handle 1, encode 2, enter 1, get 3, GC 1: 8 busy samples.
    const samples = [2, 3, 3, 4, 5, 5, 5, 6];
    writeFileSync(file, JSON.stringify({ nodes, startTime: 0, endTime: 8_000, samples }));
    const summary = summarizeProfile(file, ROOT, "owners");
    expect(Object.fromEntries(summary.byOwner)).toEqual({
      "src/admission/admission.ts": 0.5,
      "src/http/front.ts": 0.375,
      "(garbage collector)": 0.125,
    });
    // Self time by place is unchanged by it.
    expect(summary.byPlace.get("pkg")).toBe(0.625);
  });

  it("adds up allocations by place from a sampling heap profile", () => {
    const places = allocationsByPlace(
      {
        head: {
          callFrame: frame("(root)"),
          selfSize: 0,
          children: [
            {
              callFrame: frame("handle", "file:///repo/src/http/front.ts"),
              selfSize: 100,
              children: [
                { callFrame: frame("encode", "file:///repo/node_modules/pkg/i.js"), selfSize: 300 },
              ],
            },
            { callFrame: frame("other", "file:///repo/src/http/front.ts"), selfSize: 20 },
          ],
        },
      },
      ROOT,
    );
    expect(Object.fromEntries(places)).toEqual({ "src/http/front.ts": 120, pkg: 300 });
  });
});

/**
 * Reading V8 CPU profiles (`node --cpu-prof`) of the service under load:
 * the frames with the most self time, the same by place (our source files
 * through the build's source map, packages, Node's own modules, the garbage
 * collector), and a flame graph drawn as SVG. Idle samples (the process
 * waiting for the database or the network) are left out: what remains is
 * what a call costs the server's core.
 */
import { readFileSync } from "node:fs";
import { SourceMap, type SourceMapPayload } from "node:module";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  /** 0-based. */
  readonly lineNumber: number;
  /** 0-based. */
  readonly columnNumber: number;
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly hitCount?: number;
  readonly children?: readonly number[];
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples?: readonly number[];
}

/** A frame as a reader knows it: function, place, and the place's kind. */
export interface Frame {
  readonly name: string;
  /** src/http/front.ts:120, node_modules/mongodb/…, node:internal/…, or "" */
  readonly where: string;
  /** Our source file, a package, a Node module group, or a V8 pseudo-frame. */
  readonly place: string;
}

export interface SelfCost {
  readonly frame: Frame;
  /** Share of the busy samples. */
  readonly share: number;
}

export interface ProfileSummary {
  readonly topFrames: readonly SelfCost[];
  /** Self time by place, as shares of the busy samples. */
  readonly byPlace: ReadonlyMap<string, number>;
  /**
   * Time by owner, as shares of the busy samples: a sample is our source
   * file's whose frame is the nearest one of ours above it (what a file of
   * ours calls in packages and Node counts as its own, what it calls back
   * in another file of ours does not); samples with none of ours above them
   * by their own place.
   */
  readonly byOwner: ReadonlyMap<string, number>;
  /** Folded stacks ("a;b;c samples" lines) for any flame graph tool. */
  readonly folded: string;
  readonly svg: string;
}

const IDLE = new Set(["(idle)", "(root)"]);

/**
 * Summarizes a profile. `root` is the checkout (to name files). Shares are
 * of the busy samples: the sampler counts wall time while the process is not
 * idle, also while it waits for the core, so a cost per call is a share times
 * the process's own CPU per call, measured beside the profile.
 */
export function summarizeProfile(
  file: string,
  root: string,
  title: string,
  top = 25,
): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const resolve = frameResolver(root);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const hits = new Map<number, number>();
  if (profile.samples) {
    for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);
  } else {
    for (const n of profile.nodes) hits.set(n.id, n.hitCount ?? 0);
  }
  let busySamples = 0;
  for (const n of profile.nodes) {
    if (!IDLE.has(n.callFrame.functionName)) busySamples += hits.get(n.id) ?? 0;
  }
  const share = (samples: number) => (busySamples > 0 ? samples / busySamples : 0);

  const selfByFrame = new Map<string, { frame: Frame; samples: number }>();
  const selfByPlace = new Map<string, number>();
  for (const n of profile.nodes) {
    const samples = hits.get(n.id) ?? 0;
    if (samples === 0 || IDLE.has(n.callFrame.functionName)) continue;
    const frame = resolve(n.callFrame);
    const key = `${frame.name}\u0000${frame.where}`;
    const entry = selfByFrame.get(key) ?? { frame, samples: 0 };
    entry.samples += samples;
    selfByFrame.set(key, entry);
    selfByPlace.set(frame.place, (selfByPlace.get(frame.place) ?? 0) + samples);
  }
  const topFrames = [...selfByFrame.values()]
    .sort((a, b) => b.samples - a.samples)
    .slice(0, top)
    .map((e) => ({ frame: e.frame, share: share(e.samples) }));
  /** Samples by key as shares of the busy samples, largest first. */
  const shares = (samples: ReadonlyMap<string, number>) =>
    new Map([...samples.entries()].sort((a, b) => b[1] - a[1]).map(([key, n]) => [key, share(n)]));
  const byPlace = shares(selfByPlace);

  // Folded stacks: every sampled path from the root, idle left out; and the owners.
  const folded = new Map<string, number>();
  const byOwnerSamples = new Map<string, number>();
  const walk = (node: ProfileNode, path: string, owner: string | undefined) => {
    const frame = resolve(node.callFrame);
    const idle = IDLE.has(node.callFrame.functionName);
    const here = idle
      ? path
      : `${path}${path ? ";" : ""}${frame.name}${frame.where ? ` (${frame.where})` : ""}`;
    const ours = frame.place.startsWith("src/") ? frame.place : owner;
    const samples = hits.get(node.id) ?? 0;
    if (samples > 0 && here !== "" && !idle) {
      folded.set(here, (folded.get(here) ?? 0) + samples);
      const by = ours ?? frame.place;
      byOwnerSamples.set(by, (byOwnerSamples.get(by) ?? 0) + samples);
    }
    for (const child of node.children ?? []) {
      const next = byId.get(child);
      if (next) walk(next, here, ours);
    }
  };
  const rootNode = profile.nodes.find((n) => n.callFrame.functionName === "(root)");
  if (rootNode) walk(rootNode, "", undefined);
  const byOwner = shares(byOwnerSamples);
  const foldedText = [...folded.entries()].map(([stack, n]) => `${stack} ${n}`).join("\n");
  return {
    topFrames,
    byPlace,
    byOwner,
    folded: `${foldedText}\n`,
    svg: flameGraph(folded, title),
  };
}

interface SamplingNode {
  readonly callFrame: CallFrame;
  /** Bytes allocated here (the sampler's estimate), objects still alive or not. */
  readonly selfSize: number;
  readonly children?: readonly SamplingNode[];
}

/**
 * Allocations by place from a sampling heap profile (HeapProfiler.stopSampling
 * with includeObjectsCollectedByMajorGC and …MinorGC: every allocation, not
 * only what survives), in bytes.
 */
export function allocationsByPlace(
  profile: { readonly head: SamplingNode },
  root: string,
): Map<string, number> {
  const resolve = frameResolver(root);
  const byPlace = new Map<string, number>();
  const walk = (node: SamplingNode) => {
    if (node.selfSize > 0) {
      const { place } = resolve(node.callFrame);
      byPlace.set(place, (byPlace.get(place) ?? 0) + node.selfSize);
    }
    for (const child of node.children ?? []) walk(child);
  };
  walk(profile.head);
  return byPlace;
}

/** Names frames: our bundle's frames through its source map, the rest by path. */
function frameResolver(root: string): (frame: CallFrame) => Frame {
  const maps = new Map<string, SourceMap | null>();
  const mapOf = (url: string): SourceMap | null => {
    if (!maps.has(url)) {
      let map: SourceMap | null = null;
      try {
        const payload = JSON.parse(
          readFileSync(`${fileURLToPath(url)}.map`, "utf8"),
        ) as SourceMapPayload;
        map = new SourceMap(payload);
      } catch {
        map = null;
      }
      maps.set(url, map);
    }
    return maps.get(url) ?? null;
  };
  return (frame) => {
    const name = frame.functionName || "(anonymous)";
    if (frame.url === "") {
      return { name, where: "", place: name.startsWith("(") ? name : "(native)" };
    }
    if (frame.url.startsWith("node:")) {
      const module = frame.url.replace(/^node:(internal\/)?/, "").split("/")[0] ?? "";
      return {
        name,
        where: `${frame.url}:${frame.lineNumber + 1}`,
        place: `node:${module}`,
      };
    }
    let path = frame.url.startsWith("file:") ? fileURLToPath(frame.url) : frame.url;
    let line = frame.lineNumber + 1;
    const map = frame.url.startsWith("file:") ? mapOf(frame.url) : null;
    if (map) {
      const entry = map.findEntry(frame.lineNumber, frame.columnNumber) as {
        originalSource?: string;
        originalLine?: number;
      };
      if (entry.originalSource) {
        const source = entry.originalSource.startsWith("file:")
          ? fileURLToPath(entry.originalSource)
          : new URL(entry.originalSource, frame.url).pathname;
        path = source;
        line = (entry.originalLine ?? 0) + 1;
      }
    }
    const rel = relative(root, path);
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(rel)?.[1];
    return { name, where: `${shorten(rel)}:${line}`, place: pkg ?? rel };
  };
}

/** node_modules/.pnpm-like nesting and long package paths, shortened for reading. */
function shorten(path: string): string {
  const at = path.lastIndexOf("node_modules/");
  return at === -1 ? path : path.slice(at);
}

// ---------------------------------------------------------------- flame graph

interface Cell {
  readonly name: string;
  samples: number;
  readonly children: Map<string, Cell>;
}

const WIDTH = 1200;
const ROW = 17;
const MIN_WIDTH = 0.5;

/** A flame graph (root at the bottom, width = samples) as a self-contained SVG. */
function flameGraph(folded: ReadonlyMap<string, number>, title: string): string {
  const root: Cell = { name: "all", samples: 0, children: new Map() };
  for (const [stack, samples] of folded) {
    root.samples += samples;
    let cell = root;
    for (const name of stack.split(";")) {
      let next = cell.children.get(name);
      if (!next) {
        next = { name, samples: 0, children: new Map() };
        cell.children.set(name, next);
      }
      next.samples += samples;
      cell = next;
    }
  }
  const depth = (cell: Cell): number =>
    1 + Math.max(0, ...[...cell.children.values()].map((c) => depth(c)));
  const rows = depth(root);
  const height = (rows + 2) * ROW + 10;
  const scale = root.samples > 0 ? WIDTH / root.samples : 0;
  const rects: string[] = [];
  const draw = (cell: Cell, x: number, level: number) => {
    const width = cell.samples * scale;
    if (width < MIN_WIDTH) return;
    const y = height - (level + 1) * ROW - 4;
    const label = `${cell.name} — ${((100 * cell.samples) / Math.max(1, root.samples)).toFixed(1)} %`;
    const chars = Math.floor((width - 6) / 6.5);
    const text =
      chars >= 3
        ? `<text x="${(x + 3).toFixed(1)}" y="${y + 12}">${xmlText(cell.name.length > chars ? `${cell.name.slice(0, chars - 1)}…` : cell.name)}</text>`
        : "";
    rects.push(
      `<g><title>${xmlText(label)}</title><rect x="${x.toFixed(1)}" y="${y}" width="${width.toFixed(1)}" height="${ROW - 1}" fill="${color(cell.name)}" rx="2"/>${text}</g>`,
    );
    let offset = x;
    for (const child of [...cell.children.values()].sort((a, b) => a.name.localeCompare(b.name))) {
      draw(child, offset, level + 1);
      offset += child.samples * scale;
    }
  };
  draw(root, 0, 0);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="monospace" font-size="11">`,
    `<rect width="100%" height="100%" fill="#fdfdf8"/>`,
    `<text x="${WIDTH / 2}" y="16" text-anchor="middle" font-size="14">${xmlText(title)}</text>`,
    ...rects,
    "</svg>",
    "",
  ].join("\n");
}

/** Warm colours by kind: ours orange, packages yellow, Node red, V8 grey. */
function color(name: string): string {
  const hash = [...name].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7);
  const jitter = hash % 40;
  if (name.includes("(src/")) return `rgb(${230 + (jitter % 25)},${120 + jitter},50)`;
  if (name.includes("node_modules/")) return `rgb(${215 + (jitter % 40)},${190 + jitter},60)`;
  if (name.includes("(node:")) return `rgb(${210 + (jitter % 45)},${80 + jitter},70)`;
  return `rgb(${170 + jitter},${170 + jitter},${165 + jitter})`;
}

function xmlText(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

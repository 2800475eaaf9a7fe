/**
 * The hot-path histogram against prom-client's own: the same observations
 * give the same exposition text, byte for byte (bucket edges, +Inf, sum,
 * count, label order and escaping), so that dashboards, alert rules and
 * scrapers see no difference.
 */
import { Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { KeyedHistogram } from "../../src/observability/histogram";

const BOUNDS = [0.005, 0.01, 0.1, 1];
const NAMES = ["method", "route", "status", "error_type"];

function both() {
  const ours = new Registry();
  const theirs = new Registry();
  const keyed = new KeyedHistogram("d_seconds", "help text", NAMES, BOUNDS, ours);
  const reference = new Histogram({
    name: "d_seconds",
    help: "help text",
    labelNames: NAMES,
    buckets: BOUNDS,
    registers: [theirs],
  });
  return { ours, theirs, keyed, reference };
}

describe("KeyedHistogram", () => {
  it("a declared series is exposed at zero, as prom-client's zero() exposes it", async () => {
    const { ours, theirs, keyed, reference } = both();
    keyed.declare({ method: "GET", route: "/a", status: 200 });
    reference.zero({ method: "GET", route: "/a", status: 200 });
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.metrics()).toMatch(
      /^d_seconds_count\{method="GET",route="\/a",status="200"\} 0$/m,
    );
  });

  it("exposes exactly what prom-client's Histogram exposes for the same observations", async () => {
    const { ours, theirs, keyed, reference } = both();
    const observations: [Record<string, string | number>, number][] = [
      [{ method: "GET", route: "/a", status: 200 }, 0.004],
      [{ method: "GET", route: "/a", status: 200 }, 0.005],
      [{ method: "GET", route: "/a", status: 200 }, 0.0051],
      [{ method: "POST", route: '/q"uote\\', status: 500, error_type: "500" }, 3],
      [{ method: "GET", status: 404 }, 0.2],
      [{ method: "GET", route: "/a", status: 200 }, 1],
      [{ method: "GET", status: 404 }, 0],
    ];
    for (const [labels, value] of observations) {
      keyed.observe(labels, value);
      reference.observe(labels, value);
    }
    const text = await ours.metrics();
    expect(text).toBe(await theirs.metrics());
    expect(text).toContain('d_seconds_bucket{le="0.005",method="GET",route="/a",status="200"} 2');
    expect(text).toContain('d_seconds_count{method="GET",status="404"} 2');
  });

  it("keeps label sets apart that differ only by a missing label or an empty value", async () => {
    const { ours, keyed } = both();
    keyed.observe({ method: "GET", route: "" }, 0.001);
    keyed.observe({ method: "GET" }, 0.001);
    const text = await ours.metrics();
    expect(text).toContain('d_seconds_count{method="GET",route=""} 1');
    expect(text).toContain('d_seconds_count{method="GET"} 1');
  });

  it("exposes the labels in the order of its label names, whatever the order they come in", async () => {
    const { ours, keyed } = both();
    keyed.observe({ status: 200, error_type: "x", method: "GET", route: "/r" }, 0.001);
    expect(await ours.metrics()).toContain(
      'd_seconds_count{method="GET",route="/r",status="200",error_type="x"} 1',
    );
  });

  it("counts a number and its string as one series, as the exposition shows them", async () => {
    const { ours, keyed } = both();
    keyed.observe({ method: "GET", status: 200 }, 0.001);
    keyed.observe({ method: "GET", status: "200" }, 0.001);
    expect(await ours.metrics()).toContain('d_seconds_count{method="GET",status="200"} 2');
  });

  it("keeps apart label sets whose values would run together in one string", async () => {
    const { ours, keyed } = both();
    keyed.observe({ method: "a\u0000b", route: "c" }, 0.001);
    keyed.observe({ method: "a", route: "b\u0000c" }, 0.001);
    keyed.observe({ method: "\u0001", route: "x" }, 0.001);
    keyed.observe({ route: "x" }, 0.001);
    const counts = (await ours.metrics())
      .split("\n")
      .filter((l) => l.startsWith("d_seconds_count"));
    expect(counts).toHaveLength(4);
  });

  it("refuses a label it was not given, as prom-client does", () => {
    const { keyed } = both();
    expect(() => keyed.observe({ method: "GET", path: "/secret" }, 1)).toThrow(
      'label "path" is not a label of d_seconds',
    );
  });

  it("starts again empty after reset", async () => {
    const { ours, keyed } = both();
    keyed.observe({ method: "GET" }, 1);
    keyed.reset();
    expect(await ours.metrics()).not.toContain("d_seconds_count");
  });
});

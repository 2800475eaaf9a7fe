/**
 * Reads `explain` output (verbosity "executionStats") of MongoDB 6, 7 and 8,
 * classic and slot-based (SBE) engines, from a mongod or through a mongos,
 * into one summary the plan tests assert on. The shapes read (only these
 * fields; everything else is ignored):
 *
 * 1. mongod, classic engine (find, count, update, delete; explainVersion "1"):
 *      { queryPlanner: { winningPlan: PLAN },
 *        executionStats: { totalKeysExamined, totalDocsExamined, executionStages } }
 *    PLAN = { stage: "LIMIT" | "PROJECTION_COVERED" | "FETCH" | "IXSCAN" | "SORT"
 *             | "COLLSCAN" | "OR" | "SORT_MERGE" | "COUNT" | "COUNT_SCAN" | "UPDATE"
 *             | "SHARDING_FILTER" | "IDHACK" | "EXPRESS_IXSCAN" | …,
 *             indexName?, keyPattern?, inputStage?: PLAN, inputStages?: PLAN[] }
 *    (MongoDB 8's express path: winningPlan { stage: "EXPRESS_IXSCAN", indexName,
 *    keyPattern: "{ boxId: 1, … }" as a string }.)
 * 2. mongod, slot-based engine (explainVersion "2": 6.0 finds, 7.0+ $group):
 *      { queryPlanner: { winningPlan: { queryPlan: PLAN, slotBasedPlan } }, executionStats: { … as 1 } }
 * 3. mongod, aggregate whose first stages ran in a query ($cursor; classic):
 *      { stages: [ { $cursor: { queryPlanner: …, executionStats: … as 1 or 2 } }, { $group: … }, … ] }
 * 4. mongos, find / count / update / delete:
 *      { queryPlanner: { winningPlan: { stage: "SINGLE_SHARD" | "SHARD_MERGE" | "SHARD_WRITE" | …,
 *                                      shards: [ { shardName, winningPlan: PLAN | { queryPlan: PLAN } } ] } },
 *        executionStats: { totalKeysExamined, totalDocsExamined,
 *                          executionStages: { stage, shards: [ { shardName, totalKeysExamined, totalDocsExamined } ] } } }
 * 5. mongos, aggregate:
 *      { mergeType, splitPipeline, shards: { <shardName>: <shape 1, 2 or 3> } }
 *
 * Key and document counts are executionStats.totalKeysExamined /
 * totalDocsExamined (summed over shards when the top level has none).
 */
import type { Document } from "mongodb";

export interface PlanIndex {
  readonly stage: string;
  /** Absent on IDHACK (the `_id_` index). */
  readonly indexName: string | undefined;
}

export interface PlanSummary {
  /** Every stage of the winning plan (of every shard), upper case as the planner names them; pipeline stages as `$group` etc. */
  readonly stages: string[];
  /** Every index scan of the winning plan(s). */
  readonly indexes: PlanIndex[];
  readonly totalKeysExamined: number;
  readonly totalDocsExamined: number;
  /** Through a mongos: the shards the command ran on; empty on a mongod. */
  readonly shards: string[];
  /** Through a mongos: how it combined them (SINGLE_SHARD, SHARD_MERGE, SHARD_WRITE, or the aggregate's mergeType). */
  readonly router: string | undefined;
}

const INDEX_STAGES = new Set([
  "IXSCAN",
  "COUNT_SCAN",
  "DISTINCT_SCAN",
  "EXPRESS_IXSCAN",
  "IDHACK",
  "EXPRESS_CLUSTERED_IXSCAN",
]);

export class ExplainShapeError extends Error {
  override readonly name = "ExplainShapeError";
}

export function summarizeExplain(explain: Document): PlanSummary {
  // 5. mongos aggregate: shards keyed by name.
  if (isObject(explain.shards) && !Array.isArray(explain.shards) && !explain.queryPlanner) {
    const entries = Object.entries(explain.shards as Record<string, Document>);
    if (entries.length === 0) throw new ExplainShapeError("mongos explain lists no shard");
    const parts = entries.map(([, shard]) => summarizeExplain(shard));
    return {
      ...merge(parts),
      shards: entries.map(([name]) => name),
      router: typeof explain.mergeType === "string" ? explain.mergeType : "aggregate",
    };
  }
  // 3. aggregate with a $cursor stage (possibly after a top-level queryPlanner of SBE: prefer $cursor's).
  if (Array.isArray(explain.stages) && isObject(explain.stages[0]?.$cursor)) {
    const inner = summarizeExplain(explain.stages[0].$cursor as Document);
    const pipeline = (explain.stages as Document[])
      .slice(1)
      .flatMap((s) => Object.keys(s).filter((k) => k.startsWith("$")));
    return { ...inner, stages: [...inner.stages, ...pipeline] };
  }
  const planner = explain.queryPlanner;
  if (!isObject(planner) || !isObject(planner.winningPlan)) {
    throw new ExplainShapeError(
      `no queryPlanner.winningPlan, no stages[0].$cursor, no shards: ${JSON.stringify(explain).slice(0, 300)}`,
    );
  }
  const winning = planner.winningPlan as Document;
  const stats = isObject(explain.executionStats) ? (explain.executionStats as Document) : {};
  // 4. mongos find/count/update/delete.
  if (Array.isArray(winning.shards)) {
    const shards = winning.shards as Document[];
    const stages: string[] = [];
    const indexes: PlanIndex[] = [];
    for (const shard of shards) {
      const plan = isObject(shard.winningPlan) ? (shard.winningPlan as Document) : {};
      walk(isObject(plan.queryPlan) ? (plan.queryPlan as Document) : plan, stages, indexes);
    }
    const shardStats = Array.isArray(stats.executionStages?.shards)
      ? (stats.executionStages.shards as Document[])
      : [];
    return {
      stages,
      indexes,
      totalKeysExamined: total(stats, shardStats, "totalKeysExamined"),
      totalDocsExamined: total(stats, shardStats, "totalDocsExamined"),
      shards: shards.map((s, i) => String(s.shardName ?? `shard ${i}`)),
      router: typeof winning.stage === "string" ? winning.stage : undefined,
    };
  }
  // 1 and 2: a mongod.
  const stages: string[] = [];
  const indexes: PlanIndex[] = [];
  walk(isObject(winning.queryPlan) ? (winning.queryPlan as Document) : winning, stages, indexes);
  return {
    stages,
    indexes,
    totalKeysExamined: total(stats, [], "totalKeysExamined"),
    totalDocsExamined: total(stats, [], "totalDocsExamined"),
    shards: [],
    router: undefined,
  };
}

function walk(plan: Document, stages: string[], indexes: PlanIndex[]): void {
  if (typeof plan.stage === "string") {
    stages.push(plan.stage);
    if (INDEX_STAGES.has(plan.stage)) {
      indexes.push({
        stage: plan.stage,
        indexName:
          typeof plan.indexName === "string"
            ? plan.indexName
            : plan.stage === "IDHACK"
              ? "_id_"
              : undefined,
      });
    }
  }
  for (const key of ["inputStage", "outerStage", "innerStage", "thenStage", "elseStage"]) {
    if (isObject(plan[key])) walk(plan[key] as Document, stages, indexes);
  }
  if (Array.isArray(plan.inputStages)) {
    for (const child of plan.inputStages as Document[]) walk(child, stages, indexes);
  }
}

function total(stats: Document, shards: Document[], field: string): number {
  if (typeof stats[field] === "number") return stats[field];
  if (shards.length > 0) return shards.reduce((sum, s) => sum + Number(s[field] ?? 0), 0);
  throw new ExplainShapeError(`executionStats has no ${field} (was verbosity "executionStats"?)`);
}

function merge(parts: PlanSummary[]): Omit<PlanSummary, "shards" | "router"> {
  return {
    stages: parts.flatMap((p) => p.stages),
    indexes: parts.flatMap((p) => p.indexes),
    totalKeysExamined: parts.reduce((n, p) => n + p.totalKeysExamined, 0),
    totalDocsExamined: parts.reduce((n, p) => n + p.totalDocsExamined, 0),
  };
}

function isObject(value: unknown): value is Document {
  return typeof value === "object" && value !== null;
}

/** Fields the driver adds to a command that `explain` must not see. */
const DRIVER_FIELDS = new Set([
  "lsid",
  "txnNumber",
  "$clusterTime",
  "$db",
  "$readPreference",
  "readConcern",
  "writeConcern",
  "apiVersion",
  "apiStrict",
  "apiDeprecationErrors",
  "autocommit",
  "startTransaction",
  "maxTimeMS",
]);

/**
 * The explain commands for a recorded command: one per statement (an update
 * or delete with several statements becomes several explains); none for
 * commands that are no query (insert, createIndexes, getMore, …).
 */
export function explainCommandsFor(command: Document): Document[] {
  const name = Object.keys(command)[0];
  const clean = Object.fromEntries(
    Object.entries(command).filter(([key]) => !DRIVER_FIELDS.has(key)),
  );
  const explain = (inner: Document) => ({ explain: inner, verbosity: "executionStats" });
  switch (name) {
    case "find":
    case "aggregate":
    case "count":
    case "distinct":
      return [explain(clean)];
    case "update":
    case "delete": {
      const list = name === "update" ? "updates" : "deletes";
      const statements = Array.isArray(clean[list]) ? (clean[list] as Document[]) : [];
      return statements.map((statement) =>
        explain({ [name]: clean[name], [list]: [statement], ordered: true }),
      );
    }
    default:
      return [];
  }
}

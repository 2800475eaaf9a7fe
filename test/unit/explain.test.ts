/**
 * The explain reader of the plan tests (test/support/explain.ts), on the
 * shapes MongoDB 6, 7 and 8 answer (classic and slot-based engines, mongod
 * and mongos), abridged to the fields the reader looks at plus some it must
 * ignore. The plan tests themselves need a real MongoDB; this runs anywhere.
 */
import { describe, expect, it } from "vitest";
import { ExplainShapeError, explainCommandsFor, summarizeExplain } from "../support/explain";

const ixscan = (indexName: string, extra = {}) => ({
  stage: "IXSCAN",
  keyPattern: { boxId: 1, counteragentGroupId: 1, status: 1, listingKey: 1, counteragentBoxId: 1 },
  indexName,
  isMultiKey: false,
  direction: "forward",
  indexBounds: { boxId: ['["b", "b"]'], listingKey: ['("08640001767225600000m", {})'] },
  ...extra,
});
const coveredPage = {
  stage: "LIMIT",
  limitAmount: 100,
  inputStage: {
    stage: "PROJECTION_COVERED",
    transformBy: { _id: 0, listingKey: 1 },
    inputStage: ixscan("group_listing_key"),
  },
};
const stats = (keys: number, docs: number, executionStages: object = {}) => ({
  executionSuccess: true,
  nReturned: 100,
  executionTimeMillis: 0,
  totalKeysExamined: keys,
  totalDocsExamined: docs,
  executionStages,
});

describe("mongod", () => {
  it("classic find (6.0–8.0): stages, index, keys and documents", () => {
    const summary = summarizeExplain({
      explainVersion: "1",
      queryPlanner: {
        namespace: "t.counteragents",
        winningPlan: coveredPage,
        rejectedPlans: [{ stage: "COLLSCAN" }],
      },
      executionStats: stats(101, 0, { stage: "LIMIT", inputStage: {} }),
      serverInfo: { version: "7.0.14" },
      ok: 1,
    });
    expect(summary).toEqual({
      stages: ["LIMIT", "PROJECTION_COVERED", "IXSCAN"],
      indexes: [{ stage: "IXSCAN", indexName: "group_listing_key" }],
      totalKeysExamined: 101,
      totalDocsExamined: 0,
      shards: [],
      router: undefined,
    });
  });

  it("slot-based engine (6.0 find, explainVersion 2): the queryPlan tree, not the SBE stages", () => {
    const summary = summarizeExplain({
      explainVersion: "2",
      queryPlanner: {
        winningPlan: {
          queryPlan: { ...coveredPage, planNodeId: 3 },
          slotBasedPlan: { slots: "$$RESULT=s11", stages: "[3] limit 100 \n[1] ixseek …" },
        },
        rejectedPlans: [],
      },
      executionStats: stats(100, 0, { stage: "limit", inputStage: { stage: "ixseek" } }),
    });
    expect(summary.stages).toEqual(["LIMIT", "PROJECTION_COVERED", "IXSCAN"]);
    expect(summary.totalKeysExamined).toBe(100);
  });

  it("the whole-group $or plan and a blocking sort are seen", () => {
    const summary = summarizeExplain({
      queryPlanner: {
        winningPlan: {
          stage: "PROJECTION_COVERED",
          inputStage: {
            stage: "SORT",
            sortPattern: { listingKey: 1 },
            inputStage: {
              stage: "OR",
              inputStages: [ixscan("group_listing"), ixscan("group_listing")],
            },
          },
        },
      },
      executionStats: stats(100_002, 0),
    });
    expect(summary.stages).toEqual(["PROJECTION_COVERED", "SORT", "OR", "IXSCAN", "IXSCAN"]);
    expect(summary.indexes.map((i) => i.indexName)).toEqual(["group_listing", "group_listing"]);
  });

  it("a collection scan is seen", () => {
    const summary = summarizeExplain({
      queryPlanner: { winningPlan: { stage: "COLLSCAN", direction: "forward" } },
      executionStats: stats(0, 100_000),
    });
    expect(summary.stages).toEqual(["COLLSCAN"]);
    expect(summary.indexes).toEqual([]);
    expect(summary.totalDocsExamined).toBe(100_000);
  });

  it("MongoDB 8's express path for a point lookup (keyPattern as a string)", () => {
    const summary = summarizeExplain({
      explainVersion: "1",
      queryPlanner: {
        winningPlan: {
          isCached: false,
          stage: "EXPRESS_IXSCAN",
          keyPattern: "{ boxId: 1, messageId: 1 }",
          indexName: "boxId_messageId",
        },
        rejectedPlans: [],
      },
      executionStats: stats(1, 1, { stage: "EXPRESS_IXSCAN", keysExamined: 1, docsExamined: 1 }),
    });
    expect(summary.indexes).toEqual([{ stage: "EXPRESS_IXSCAN", indexName: "boxId_messageId" }]);
    expect(summary.totalKeysExamined).toBe(1);
  });

  it("IDHACK is the _id index", () => {
    const summary = summarizeExplain({
      queryPlanner: { winningPlan: { stage: "IDHACK" } },
      executionStats: stats(1, 1),
    });
    expect(summary.indexes).toEqual([{ stage: "IDHACK", indexName: "_id_" }]);
  });

  it("an update: UPDATE over FETCH over IXSCAN", () => {
    const summary = summarizeExplain({
      queryPlanner: {
        winningPlan: {
          stage: "UPDATE",
          inputStage: {
            stage: "FETCH",
            filter: { version: { $eq: 3 } },
            inputStage: ixscan("boxId_messageId"),
          },
        },
      },
      executionStats: stats(1, 1, { stage: "UPDATE", nMatched: 1, nWouldModify: 1 }),
    });
    expect(summary.stages).toEqual(["UPDATE", "FETCH", "IXSCAN"]);
  });

  it("the count command: COUNT over COUNT_SCAN", () => {
    const summary = summarizeExplain({
      queryPlanner: {
        winningPlan: {
          stage: "COUNT",
          inputStage: { stage: "COUNT_SCAN", indexName: "group_listing_key" },
        },
      },
      executionStats: stats(100_001, 0),
    });
    expect(summary.indexes).toEqual([{ stage: "COUNT_SCAN", indexName: "group_listing_key" }]);
  });

  it("aggregate with a $cursor stage (classic, countDocuments' $match + $group)", () => {
    const summary = summarizeExplain({
      explainVersion: "1",
      stages: [
        {
          $cursor: {
            queryPlanner: {
              winningPlan: {
                stage: "PROJECTION_COVERED",
                transformBy: { _id: 0 },
                inputStage: ixscan("group_listing_key"),
              },
            },
            executionStats: stats(100_001, 0),
          },
          nReturned: 100_000,
        },
        { $group: { _id: { $const: 1 }, n: { $sum: { $const: 1 } } }, nReturned: 1 },
      ],
      ok: 1,
    });
    expect(summary.stages).toEqual(["PROJECTION_COVERED", "IXSCAN", "$group"]);
    expect(summary.totalKeysExamined).toBe(100_001);
  });

  it("aggregate pushed down whole into the slot-based engine (7.0, 8.0)", () => {
    const summary = summarizeExplain({
      explainVersion: "2",
      queryPlanner: {
        winningPlan: {
          queryPlan: {
            stage: "GROUP",
            inputStage: { stage: "PROJECTION_COVERED", inputStage: ixscan("group_listing_key") },
          },
          slotBasedPlan: {},
        },
      },
      executionStats: stats(101, 0),
    });
    expect(summary.stages).toEqual(["GROUP", "PROJECTION_COVERED", "IXSCAN"]);
  });
});

describe("mongos", () => {
  it("find on one shard: SINGLE_SHARD, the shard's plan (classic or SBE) and totals", () => {
    const summary = summarizeExplain({
      queryPlanner: {
        mongosPlannerVersion: 1,
        winningPlan: {
          stage: "SINGLE_SHARD",
          shards: [
            {
              shardName: "shard01",
              connectionString: "shard01/localhost:27018",
              explainVersion: "2",
              winningPlan: {
                queryPlan: {
                  stage: "LIMIT",
                  inputStage: {
                    stage: "PROJECTION_COVERED",
                    inputStage: {
                      stage: "SHARDING_FILTER",
                      inputStage: ixscan("group_listing_key"),
                    },
                  },
                },
                slotBasedPlan: {},
              },
              rejectedPlans: [],
            },
          ],
        },
      },
      executionStats: {
        nReturned: 100,
        executionTimeMillis: 1,
        totalKeysExamined: 100,
        totalDocsExamined: 0,
        executionStages: {
          stage: "SINGLE_SHARD",
          shards: [{ shardName: "shard01", totalKeysExamined: 100, totalDocsExamined: 0 }],
        },
      },
      ok: 1,
    });
    expect(summary).toMatchObject({
      stages: ["LIMIT", "PROJECTION_COVERED", "SHARDING_FILTER", "IXSCAN"],
      shards: ["shard01"],
      router: "SINGLE_SHARD",
      totalKeysExamined: 100,
      totalDocsExamined: 0,
    });
  });

  it("a write on two shards: totals summed from the shards when the top level has none", () => {
    const shardPlan = (name: string) => ({
      shardName: name,
      winningPlan: { stage: "UPDATE", inputStage: ixscan("boxId_messageId") },
    });
    const summary = summarizeExplain({
      queryPlanner: {
        winningPlan: { stage: "SHARD_WRITE", shards: [shardPlan("a"), shardPlan("b")] },
      },
      executionStats: {
        executionStages: {
          stage: "SHARD_WRITE",
          shards: [
            { shardName: "a", totalKeysExamined: 1, totalDocsExamined: 1 },
            { shardName: "b", totalKeysExamined: 0, totalDocsExamined: 0 },
          ],
        },
      },
    });
    expect(summary).toMatchObject({
      shards: ["a", "b"],
      router: "SHARD_WRITE",
      totalKeysExamined: 1,
    });
  });

  it("aggregate: shards keyed by name, each a mongod shape", () => {
    const summary = summarizeExplain({
      mergeType: "mongos",
      splitPipeline: null,
      shards: {
        shard02: {
          host: "localhost:27019",
          stages: [
            {
              $cursor: {
                queryPlanner: { winningPlan: ixscan("group_listing_key") },
                executionStats: stats(101, 0),
              },
            },
            { $group: {} },
          ],
        },
      },
      ok: 1,
    });
    expect(summary).toMatchObject({
      stages: ["IXSCAN", "$group"],
      shards: ["shard02"],
      router: "mongos",
      totalKeysExamined: 101,
    });
  });

  it("an answer of no known shape is an error, not an empty summary", () => {
    expect(() => summarizeExplain({ ok: 1 })).toThrow(ExplainShapeError);
    expect(() => summarizeExplain({ queryPlanner: { winningPlan: { stage: "IXSCAN" } } })).toThrow(
      /totalKeysExamined/,
    );
  });
});

describe("explainCommandsFor", () => {
  it("drops the driver's session fields and keeps the query", () => {
    expect(
      explainCommandsFor({
        find: "counteragents",
        filter: { boxId: "b" },
        sort: { listingKey: 1 },
        projection: { _id: 0, listingKey: 1 },
        hint: "group_listing_key",
        limit: 100,
        lsid: { id: "x" },
        $clusterTime: {},
        $db: "t",
      }),
    ).toEqual([
      {
        explain: {
          find: "counteragents",
          filter: { boxId: "b" },
          sort: { listingKey: 1 },
          projection: { _id: 0, listingKey: 1 },
          hint: "group_listing_key",
          limit: 100,
        },
        verbosity: "executionStats",
      },
    ]);
  });
  it("one explain per update statement; none for inserts", () => {
    const updates = [
      { q: { a: 1 }, u: { $set: { b: 1 } } },
      { q: { a: 2 }, u: { $set: { b: 2 } } },
    ];
    expect(
      explainCommandsFor({ update: "m", updates, ordered: false, writeConcern: { w: 1 } }),
    ).toEqual(
      updates.map((u) => ({
        explain: { update: "m", updates: [u], ordered: true },
        verbosity: "executionStats",
      })),
    );
    expect(explainCommandsFor({ insert: "m", documents: [{}] })).toEqual([]);
  });
});

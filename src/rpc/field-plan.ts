/**
 * A message's fields worth walking for some property of its fields (proto2
 * `required`, legacy string-bools, …): the fields that have it, and the
 * message fields (single, lists, maps) whose message holds such a field,
 * directly or deeper. Worked out once per schema; a call walks only the plan.
 */
import type { DescField, DescMessage } from "@bufbuild/protobuf";

/** The plan of each schema for fields that satisfy `has`, made when first asked for. */
export function fieldPlans(
  has: (field: DescField) => boolean,
): (schema: DescMessage) => readonly DescField[] {
  const plans = new WeakMap<DescMessage, readonly DescField[]>();
  /**
   * A message still being worked out (a recursive one: `Tree.Child` is a
   * `Tree`) is walked as if it held such fields: its plan is not known yet,
   * and walking a field that holds none finds nothing.
   */
  const workOut = (schema: DescMessage, inProgress: Set<DescMessage>): readonly DescField[] => {
    const known = plans.get(schema);
    // Stryker disable next-line ConditionalExpression: the cache; working the plan out again gives the same plan
    if (known) return known;
    inProgress.add(schema);
    const plan = schema.fields.filter((field) => {
      if (has(field)) return true;
      // A message field, a list of messages or a map to messages; undefined for any other.
      const nested = field.message;
      return (
        nested !== undefined &&
        // Stryker disable next-line ConditionalExpression,EqualityOperator: walking a message that holds no such field finds nothing; the plan only saves the walk
        (inProgress.has(nested) || workOut(nested, inProgress).length > 0)
      );
    });
    // Stryker disable next-line CallExpression: a message left "in progress" is walked, to no effect
    inProgress.delete(schema);
    // Stryker disable next-line CallExpression: the cache (see above)
    plans.set(schema, plan);
    return plan;
  };
  // A Set only when a plan is worked out: this runs for every message checked, read or written.
  // Stryker disable next-line LogicalOperator: the cache (see above)
  return (schema) => plans.get(schema) ?? workOut(schema, new Set());
}

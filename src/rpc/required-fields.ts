/**
 * proto2 `required` fields: protobuf-es decodes a message that lacks one
 * without complaint (the field reads as 0/""/false), so requests are checked
 * here, on every protocol, before a handler sees them.
 */
import { type DescField, type DescMessage, isFieldSet, type Message } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";

/**
 * The fields of a message worth looking at: required ones, and message
 * fields (single, lists, maps) whose message holds a required field,
 * directly or deeper. Worked out once per schema; for most requests it is
 * short or empty, and a call walks only it.
 */
const plans = new WeakMap<DescMessage, readonly DescField[]>();

function planOf(schema: DescMessage): readonly DescField[] {
  // Stryker disable next-line LogicalOperator: the cache; working the plan out again gives the same plan
  return plans.get(schema) ?? workOut(schema, new Set());
}

function workOut(schema: DescMessage, inProgress: Set<DescMessage>): readonly DescField[] {
  const known = plans.get(schema);
  // Stryker disable next-line ConditionalExpression: the cache; working the plan out again gives the same plan
  if (known) return known;
  inProgress.add(schema);
  const plan = schema.fields.filter((field) => {
    if (field.presence === FeatureSet_FieldPresence.LEGACY_REQUIRED) return true;
    const nested = field.message;
    // A message being worked out (a recursive one) is walked: its plan is not known yet.
    return (
      nested !== undefined &&
      // Stryker disable next-line ConditionalExpression,EqualityOperator: walking a message that holds no required field finds nothing; the plan only saves the walk
      (inProgress.has(nested) || workOut(nested, inProgress).length > 0)
    );
  });
  // Stryker disable next-line CallExpression: a message left "in progress" is walked, to no effect
  inProgress.delete(schema);
  plans.set(schema, plan);
  return plan;
}

/** Path of the first required field that is not set, e.g. `Subscriptions[1].IsSubscribed`. */
export function findMissingRequiredField(
  schema: DescMessage,
  message: Message,
  path = "",
): string | undefined {
  const missing = missingIn(schema, message);
  return missing === undefined || path === "" ? missing : `${path}.${missing}`;
}

/** The path, relative to `message`, of its first required field not set: built only for the one reported. */
function missingIn(schema: DescMessage, message: Message): string | undefined {
  const values = message as unknown as Record<string, unknown>;
  for (const field of planOf(schema)) {
    if (
      field.presence === FeatureSet_FieldPresence.LEGACY_REQUIRED &&
      !isFieldSet(message, field)
    ) {
      return field.name;
    }
    const value = values[field.localName];
    if (field.fieldKind === "message" && value !== undefined) {
      const missing = missingIn(field.message, value as Message);
      if (missing) return `${field.name}.${missing}`;
    }
    if (field.fieldKind === "list" && field.listKind === "message" && Array.isArray(value)) {
      for (let index = 0; index < value.length; index++) {
        const missing = missingIn(field.message, value[index] as Message);
        if (missing) return `${field.name}[${index}].${missing}`;
      }
    }
    if (field.fieldKind === "map" && field.mapKind === "message" && value) {
      for (const [key, item] of Object.entries(value as Record<string, Message>)) {
        const missing = missingIn(field.message, item);
        if (missing) return `${field.name}[${key}].${missing}`;
      }
    }
  }
  return undefined;
}

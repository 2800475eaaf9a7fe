/**
 * proto2 `required` fields: protobuf-es decodes a message that lacks one
 * without complaint (the field reads as 0/""/false), so requests are checked
 * here, on every protocol, before a handler sees them.
 */
import { type DescMessage, isFieldSet, type Message } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import { fieldPlans } from "./field-plan";

/** Required fields, and the message fields that hold one, directly or deeper: worked out once per schema. */
// Stryker disable next-line ConditionalExpression: a plan of every field finds the same (the walk checks presence itself); the plan only saves the walk
const planOf = fieldPlans((field) => field.presence === FeatureSet_FieldPresence.LEGACY_REQUIRED);

/** Path of the first required field that is not set, e.g. `Subscriptions[1].IsSubscribed`. */
export function findMissingRequiredField(
  schema: DescMessage,
  message: Message,
  path = "",
): string | undefined {
  const missing = missingIn(schema, message);
  return missing === undefined || path === "" ? missing : `${path}.${missing}`;
}

/**
 * The path, relative to `message`, of its first required field not set:
 * built only for the one reported. The plan holds required fields and
 * fields of messages that hold one: a list or a map in it is one of
 * messages.
 */
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
    switch (field.fieldKind) {
      case "message": {
        const missing =
          value === undefined ? undefined : missingIn(field.message, value as Message);
        if (missing) return `${field.name}.${missing}`;
        break;
      }
      case "map":
        for (const [key, item] of Object.entries(value as Record<string, Message>)) {
          const missing = missingIn(field.message as DescMessage, item);
          if (missing) return `${field.name}[${key}].${missing}`;
        }
        break;
      case "list": {
        const items = value as Message[];
        for (let index = 0; index < items.length; index++) {
          const missing = missingIn(field.message as DescMessage, items[index] as Message);
          if (missing) return `${field.name}[${index}].${missing}`;
        }
      }
    }
  }
  return undefined;
}

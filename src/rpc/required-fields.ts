/**
 * proto2 `required` fields: protobuf-es decodes a message that lacks one
 * without complaint (the field reads as 0/""/false), so requests are checked
 * here, on every protocol, before a handler sees them.
 */
import { type DescMessage, isFieldSet, type Message } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import { fieldPlans } from "./field-plan";

/** Required fields, and the message fields that hold one, directly or deeper: worked out once per schema. */
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

/**
 * proto2 `required` fields: protobuf-es decodes a message that lacks one
 * without complaint (the field reads as 0/""/false), so requests are checked
 * here, on every protocol, before a handler sees them.
 */
import { type DescMessage, isFieldSet, type Message } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";

/** Path of the first required field that is not set, e.g. `Subscriptions[1].IsSubscribed`. */
export function findMissingRequiredField(
  schema: DescMessage,
  message: Message,
  path = "",
): string | undefined {
  const values = message as unknown as Record<string, unknown>;
  for (const field of schema.fields) {
    const at = path === "" ? field.name : `${path}.${field.name}`;
    if (
      field.presence === FeatureSet_FieldPresence.LEGACY_REQUIRED &&
      !isFieldSet(message, field)
    ) {
      return at;
    }
    const value = values[field.localName];
    if (field.fieldKind === "message" && value !== undefined) {
      const missing = findMissingRequiredField(field.message, value as Message, at);
      if (missing) return missing;
    }
    if (field.fieldKind === "list" && field.listKind === "message" && Array.isArray(value)) {
      for (const [index, item] of value.entries()) {
        const missing = findMissingRequiredField(field.message, item as Message, `${at}[${index}]`);
        if (missing) return missing;
      }
    }
    if (field.fieldKind === "map" && field.mapKind === "message" && value) {
      for (const [key, item] of Object.entries(value as Record<string, Message>)) {
        const missing = findMissingRequiredField(field.message, item, `${at}[${key}]`);
        if (missing) return missing;
      }
    }
  }
  return undefined;
}

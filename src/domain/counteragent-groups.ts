/**
 * The counteragent-group family (SPEC §6.4): the rules of a group's name.
 */
import { invalidArgument } from "./errors";

export const MAX_GROUP_NAME_LENGTH = 100;

/**
 * The key names are compared by: NFC, then full case mapping (upper, then
 * lower), so that "Straße" and "STRASSE", "ΟΔΟΣ" and "οδοσ" are one name.
 */
export function groupNameKey(name: string): string {
  return name.trim().normalize("NFC").toUpperCase().toLowerCase().normalize("NFC");
}

/** 1–100 characters (code points) after trimming, no control character; the trimmed name. */
export function checkGroupName(raw: string): string {
  const name = raw.trim();
  const length = [...name].length;
  if (length === 0 || length > MAX_GROUP_NAME_LENGTH) {
    throw invalidArgument(
      `Name must be 1 to ${MAX_GROUP_NAME_LENGTH} characters after trimming`,
      "CounteragentGroup.InvalidName",
    );
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001F\u007F-\u009F]/.test(name)) {
    throw invalidArgument(
      "Name must not contain control characters",
      "CounteragentGroup.InvalidName",
    );
  }
  return name;
}

/** Checks of request values shared by the operations. */
import { invalidArgument } from "./errors";

const MAX_ID_LENGTH = 256;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it rejects
const CONTROL = /[\u0000-\u001f\u007f]/;

/** A required identifier: present, not blank, at most 256 characters, no control characters. */
export function requireId(name: string, value: string | undefined): string {
  if (value === undefined || value.trim() === "") {
    throw invalidArgument(`${name} is required`);
  }
  return checkId(name, value);
}

/** An optional identifier: absent or empty means "not given". */
export function optionalId(name: string, value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : checkId(name, value);
}

function checkId(name: string, value: string): string {
  if (value.length > MAX_ID_LENGTH || CONTROL.test(value)) {
    throw invalidArgument(`${name} is not a valid identifier`);
  }
  return value;
}

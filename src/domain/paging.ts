/**
 * AIP-158 paging beside the legacy paging of the same list (docs/api.md §3.1):
 * `page_size` and `page_token` on the request, `next_page_token` on the
 * answer, empty at the end. A list takes one style or the other, never both.
 */
import { invalidArgument } from "./errors";

export interface AipPageRequest {
  /** 0 or absent: the default; more than the most: the most (AIP-158 coerces, never refuses). */
  readonly pageSize?: number | undefined;
  /** The previous page's next_page_token; "" or absent: the first page. */
  readonly pageToken?: string | undefined;
}

/** Whether the request pages the AIP-158 way. */
export function pagesByToken(request: AipPageRequest): boolean {
  return (request.pageToken ?? "") !== "" || (request.pageSize ?? 0) !== 0;
}

/**
 * The page's length: page_size (coerced to `most`) or the legacy `count` (1 to `most`),
 * 400 when both are given or either is out of range.
 */
export function pageLengthOf(
  request: AipPageRequest & { readonly count?: number | undefined },
  fallback: number,
  most: number,
): number {
  const pageSize = request.pageSize ?? 0;
  if (!Number.isInteger(pageSize) || pageSize < 0) {
    throw invalidArgument("page_size must not be negative");
  }
  if (pageSize > 0) {
    if (request.count !== undefined) throw invalidArgument("give page_size or count, not both");
    return Math.min(pageSize, most);
  }
  const count = request.count ?? fallback;
  if (!Number.isInteger(count) || count < 1 || count > most) {
    throw invalidArgument(`count must be an integer from 1 to ${most}`);
  }
  return count;
}

/** The cursor the page starts after: page_token or the legacy one (named `legacyName`), 400 for both. */
export function cursorOf(
  pageToken: string | undefined,
  legacy: string | number | undefined,
  legacyName: string,
): string | undefined {
  const token = pageToken ?? "";
  if (token === "") return undefined;
  if (legacy !== undefined && legacy !== "") {
    throw invalidArgument(`give page_token or ${legacyName}, not both`);
  }
  return token;
}

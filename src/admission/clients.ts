/**
 * Who a call comes from, for admission (admission.ts) and its metrics,
 * before anything is verified: the Authorization value of a call is looked
 * up among the values that authenticated before, each remembered with the
 * client it proved (an API client's name, a Bearer token's client id). A
 * value never seen, or one that failed, is "unverified": every such call
 * shares one client, so invented credentials cannot buy shares of their own.
 * Values are kept in memory only, never shown; labels are bounded.
 */

/** The client of calls whose credentials have not been verified (yet). */
export const UNVERIFIED_CLIENT = "_unverified";
/** The client label of every client beyond the first MAX_LABELS. */
export const OTHER_CLIENT = "_other";

/** Authorization values remembered (the oldest is forgotten first). */
const MAX_VALUES = 10_000;
/** Distinct client labels (metrics label values). */
const MAX_LABELS = 100;
/** A label is at most this long, of these characters (anything else becomes "_"). */
const MAX_LABEL_LENGTH = 64;
const LABEL_CHARACTERS = /[^A-Za-z0-9 ._:@/-]/g;

export class ClientDirectory {
  private readonly byValue = new Map<string, string>();
  private readonly labels = new Set<string>();

  /** The client a call with this Authorization value comes from. */
  clientOf(authorization: string | undefined): string {
    if (authorization === undefined) return UNVERIFIED_CLIENT;
    return this.byValue.get(authorization) ?? UNVERIFIED_CLIENT;
  }

  /** A call with this Authorization value authenticated as `client`. */
  learn(authorization: string, client: string): void {
    const known = this.byValue.get(authorization);
    if (known !== undefined) return;
    const label = this.labelOf(client);
    if (this.byValue.size >= MAX_VALUES) {
      const oldest = this.byValue.keys().next().value as string;
      this.byValue.delete(oldest);
    }
    this.byValue.set(authorization, label);
  }

  private labelOf(client: string): string {
    const label = client.slice(0, MAX_LABEL_LENGTH).replace(LABEL_CHARACTERS, "_") || "_empty";
    if (this.labels.has(label)) return label;
    if (this.labels.size >= MAX_LABELS) return OTHER_CLIENT;
    this.labels.add(label);
    return label;
  }
}

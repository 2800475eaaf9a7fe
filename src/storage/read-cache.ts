/**
 * A bounded read-through cache with a short time to live, for lookups that
 * every call repeats (API client, token, employee rights, box). Concurrent
 * lookups of a key share one load, so a miss or an expiry never becomes a
 * thundering herd; a failed load is not kept. A change made elsewhere (a
 * client disabled, a token revoked, rights changed) is seen within `ttlMs`.
 */

export interface ReadCacheOptions {
  /** How long an answer is reused; 0 turns the cache off. */
  readonly ttlMs: number;
  /** At most this many keys are kept; the oldest go first. */
  readonly maxEntries: number;
  /** Milliseconds clock, for tests. */
  readonly now?: () => number;
}

interface Entry<V> {
  value?: V;
  loading?: Promise<V>;
  expiresAt: number;
}

export function createReadCache<V>(
  load: (key: string) => Promise<V>,
  options: ReadCacheOptions,
): (key: string) => Promise<V> {
  if (options.ttlMs <= 0) return load;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry<V>>();
  return (key) => {
    const entry = entries.get(key);
    if (entry) {
      if (entry.loading) return entry.loading;
      if (entry.expiresAt > now()) return Promise.resolve(entry.value as V);
      entries.delete(key);
    }
    const fresh: Entry<V> = { expiresAt: 0 };
    fresh.loading = load(key).then(
      (value) => {
        fresh.value = value;
        fresh.loading = undefined;
        fresh.expiresAt = now() + options.ttlMs;
        return value;
      },
      (error: unknown) => {
        if (entries.get(key) === fresh) entries.delete(key);
        throw error;
      },
    );
    entries.set(key, fresh);
    if (entries.size > options.maxEntries) {
      const oldest = entries.keys().next().value;
      if (oldest !== undefined) entries.delete(oldest);
    }
    return fresh.loading;
  };
}

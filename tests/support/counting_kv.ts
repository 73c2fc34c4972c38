/** How many operations of each kind went to a KV store. */
export interface KvCounts {
  reads: number;
  commits: number;
}

/** Wraps a KV store so that tests can count its reads (`get`, `getMany`) and atomic commits
 * (`set`/`delete` are commits too). */
export function countingKv(kv: Deno.Kv): { kv: Deno.Kv; counts: KvCounts } {
  const counts: KvCounts = { reads: 0, commits: 0 };
  const wrapped = new Proxy(kv, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      if (prop === "get" || prop === "getMany") {
        return (...args: unknown[]) => {
          counts.reads++;
          return value.apply(target, args);
        };
      }
      if (prop === "set" || prop === "delete") {
        return (...args: unknown[]) => {
          counts.commits++;
          return value.apply(target, args);
        };
      }
      if (prop === "atomic") {
        return () => {
          const op = target.atomic();
          const commit = op.commit.bind(op);
          op.commit = () => {
            counts.commits++;
            return commit();
          };
          return op;
        };
      }
      return value.bind(target);
    },
  });
  return { kv: wrapped, counts };
}

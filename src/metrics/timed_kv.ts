/**
 * A view of a KV store whose atomic commits are timed (for the KV commit latency metric); every
 * other member is the store's own.
 */

/** `kv`, with each `atomic().commit()` reported to `observe` in seconds, failed ones too. */
export function timedCommits(kv: Deno.Kv, observe: (seconds: number) => void): Deno.Kv {
  const atomic = (): Deno.AtomicOperation => {
    const op = kv.atomic();
    const commit = op.commit;
    op.commit = () => {
      const started = performance.now();
      const done = () => observe((performance.now() - started) / 1000);
      const pending = commit.call(op);
      pending.then(done, done);
      return pending;
    };
    return op;
  };
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(kv, {
    get(target, property) {
      if (property === "atomic") return atomic;
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      let method = bound.get(property);
      if (method === undefined) {
        method = value.bind(target);
        bound.set(property, method);
      }
      return method;
    },
  });
}

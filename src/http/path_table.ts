/** One def: a path (segments starting with `:` are parameters) and its method handlers. */
export interface PathDef<H> {
  path: string;
  methods: Partial<Record<string, H>>;
}

/** A matched def with its path parameters. */
export interface PathMatch<R> {
  def: R;
  params: Record<string, string>;
}

/** Matches request paths to defs: static paths by one map lookup, parameterised paths
 * segment by segment. */
export class PathTable<H, R extends PathDef<H> = PathDef<H>> {
  readonly #static = new Map<string, R>();
  readonly #dynamic: { segments: string[]; def: R }[] = [];

  constructor(defs: readonly R[]) {
    for (const def of defs) {
      if (def.path.includes("/:")) {
        this.#dynamic.push({ segments: def.path.split("/"), def });
      } else {
        this.#static.set(def.path, def);
      }
    }
  }

  /** The def for a path, or `null`. A trailing slash is ignored. */
  match(path: string): PathMatch<R> | null {
    const trimmed = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
    const exact = this.#static.get(trimmed);
    if (exact) return { def: exact, params: {} };
    const parts = trimmed.split("/");
    for (const { segments, def } of this.#dynamic) {
      if (segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < segments.length; i++) {
        const seg = segments[i]!;
        const part = parts[i]!;
        if (seg.startsWith(":")) {
          if (part === "") {
            ok = false;
            break;
          }
          try {
            params[seg.slice(1)] = decodeURIComponent(part);
          } catch {
            ok = false;
            break;
          }
        } else if (seg !== part) {
          ok = false;
          break;
        }
      }
      if (ok) return { def, params };
    }
    return null;
  }
}

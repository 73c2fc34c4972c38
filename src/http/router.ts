/** One route: a path (segments starting with `:` are parameters) and its method handlers. */
export interface RouteDef<H> {
  path: string;
  methods: Partial<Record<string, H>>;
}

/** A matched route with its path parameters. */
export interface RouteMatch<R> {
  route: R;
  params: Record<string, string>;
}

/** Matches request paths to routes: static paths by one map lookup, parameterised paths
 * segment by segment. */
export class Router<H, R extends RouteDef<H> = RouteDef<H>> {
  readonly #static = new Map<string, R>();
  readonly #dynamic: { segments: string[]; route: R }[] = [];

  constructor(routes: readonly R[]) {
    for (const route of routes) {
      if (route.path.includes("/:")) {
        this.#dynamic.push({ segments: route.path.split("/"), route });
      } else {
        this.#static.set(route.path, route);
      }
    }
  }

  /** The route for a path, or `null`. A trailing slash is ignored. */
  match(path: string): RouteMatch<R> | null {
    const trimmed = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
    const exact = this.#static.get(trimmed);
    if (exact) return { route: exact, params: {} };
    const parts = trimmed.split("/");
    for (const { segments, route } of this.#dynamic) {
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
      if (ok) return { route, params };
    }
    return null;
  }
}

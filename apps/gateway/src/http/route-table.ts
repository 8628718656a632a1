/**
 * Every route the gateway serves, recorded as Fastify registers them, so an unmatched request can
 * be told apart: an unknown path is `404`, a known path with the wrong method is `405` + `Allow`.
 * A path matches exactly as Fastify's router matches it: `/v1/account/` is not `/v1/account`
 * (Fastify's `ignoreTrailingSlash` is off), so it is an unknown path, not a known one.
 */
export class RouteTable {
  private readonly routes: { pattern: RegExp; method: string }[] = [];

  add(method: string | string[], url: string): void {
    const pattern = new RegExp(
      '^' +
        url
          .split('/')
          .map((seg) =>
            seg.startsWith(':') ? '[^/]+' : seg === '*' ? '.*' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
          )
          .join('/') +
        '$',
    );
    for (const m of Array.isArray(method) ? method : [method]) this.routes.push({ pattern, method: m.toUpperCase() });
  }

  /** Methods allowed on this path (empty when the path is unknown). */
  allowedMethods(path: string): string[] {
    const clean = path.split('?')[0] ?? path;
    return [...new Set(this.routes.filter((r) => r.pattern.test(clean)).map((r) => r.method))].sort();
  }

  /**
   * What an unrouted request answers: the methods for a `405`'s `Allow`, or none for a `404`. A path
   * that takes the request's own method was not routed for another reason (Fastify's router is the
   * authority), so it is `404` too: a `405` never names the method it refuses among the allowed ones.
   */
  allowFor(method: string, path: string): string[] {
    const allowed = this.allowedMethods(path);
    return allowed.includes(method.toUpperCase()) ? [] : allowed;
  }
}

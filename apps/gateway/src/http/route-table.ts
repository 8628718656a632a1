/**
 * Every route the gateway serves, recorded as Fastify registers them, so an unmatched request can
 * be told apart: an unknown path is `404`, a known path with the wrong method is `405` + `Allow`.
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
        '/?$',
    );
    for (const m of Array.isArray(method) ? method : [method]) this.routes.push({ pattern, method: m.toUpperCase() });
  }

  /** Methods allowed on this path (empty when the path is unknown). */
  allowedMethods(path: string): string[] {
    const clean = path.split('?')[0] ?? path;
    return [...new Set(this.routes.filter((r) => r.pattern.test(clean)).map((r) => r.method))].sort();
  }
}

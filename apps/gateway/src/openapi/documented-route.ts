import type { ApiDocOptions } from './api-doc.decorator';

/** A route as Nest registered it, before anything is checked. */
export interface FoundRoute {
  /** e.g. `AuthController` */
  controller: string;
  /** The handler's method name, e.g. `register`. */
  handler: string;
  /** Upper-case HTTP method (`ALL` cannot be documented). */
  method: string;
  /** As registered: `/v1/auth/keys/:id`. */
  path: string;
  isPublic: boolean;
  doc: ApiDocOptions | undefined;
}

/** One route the gateway serves, with what its handler says about itself. */
export interface DocumentedRoute {
  /** Lower-case, as OpenAPI keys operations. */
  method: string;
  path: string;
  /** `<controller><Handler>`, e.g. `authRegister`: unique and stable while the code is. */
  operationId: string;
  isPublic: boolean;
  doc: ApiDocOptions;
}

const lowerFirst = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);
const upperFirst = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/**
 * Every route must carry `@ApiDoc`, and its `auth` flag must agree with `@Public()`. Anything else is
 * a programming error, reported for all routes at once: the gateway refuses to start.
 */
export function documentRoutes(found: FoundRoute[]): DocumentedRoute[] {
  const problems: string[] = [];
  const routes: DocumentedRoute[] = [];
  for (const r of found) {
    const name = `${r.method} ${r.path} (${r.controller}.${r.handler})`;
    if (!r.doc) problems.push(`${name} has no @ApiDoc`);
    else if ((r.doc.auth ?? true) === r.isPublic) problems.push(`${name}: @ApiDoc auth flag disagrees with @Public()`);
    else if (r.method === 'ALL') problems.push(`${name}: a route for every method cannot be documented`);
    else {
      routes.push({
        method: r.method.toLowerCase(),
        path: r.path,
        operationId: lowerFirst(r.controller.replace(/Controller$/, '')) + upperFirst(r.handler),
        isPublic: r.isPublic,
        doc: r.doc,
      });
    }
  }
  if (problems.length > 0) throw new Error(`every route must be documented:\n  ${problems.join('\n  ')}`);
  return routes;
}

import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import type { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { IS_PUBLIC } from '../auth/public.decorator';
import { API_DOC, type ApiDocOptions } from './api-doc.decorator';
import type { FoundRoute } from './documented-route';

const asList = (value: unknown): string[] => (Array.isArray(value) ? (value as string[]) : [String(value ?? '')]);

const joinPath = (...parts: string[]): string =>
  '/' +
  parts
    .flatMap((p) => p.split('/'))
    .filter(Boolean)
    .join('/');

/**
 * Every route of every controller Nest registered, read from the metadata Nest's own router reads:
 * the `@Controller` path, the `@Get`/`@Post`… path and method, `@Public()` and `@ApiDoc`.
 */
export function discoverRoutes(
  discovery: DiscoveryService,
  scanner: MetadataScanner,
  reflector: Reflector,
): FoundRoute[] {
  const found: FoundRoute[] = [];
  for (const wrapper of discovery.getControllers()) {
    const controller = wrapper.metatype;
    if (typeof controller !== 'function') continue;
    const prototype = controller.prototype as Record<string, unknown>;
    for (const name of scanner.getAllMethodNames(prototype)) {
      const handler = prototype[name];
      if (typeof handler !== 'function') continue;
      const paths = reflector.get<unknown>(PATH_METADATA, handler);
      if (paths === undefined) continue; // a plain method, not a route
      const method = RequestMethod[reflector.get<RequestMethod>(METHOD_METADATA, handler)] ?? 'ALL';
      const doc = reflector.get<ApiDocOptions | undefined>(API_DOC, handler);
      const isPublic = reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC, [handler, controller]) === true;
      for (const prefix of asList(reflector.get<unknown>(PATH_METADATA, controller))) {
        for (const path of asList(paths)) {
          found.push({
            controller: controller.name,
            handler: name,
            method,
            path: joinPath(prefix, path),
            isPublic,
            doc,
          });
        }
      }
    }
  }
  return found;
}

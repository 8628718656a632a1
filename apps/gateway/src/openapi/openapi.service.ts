import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { documentRoutes } from './documented-route';
import { buildOpenApiDocument } from './openapi-document';
import { discoverRoutes } from './route-discovery';

/** The version in the nearest package.json above this file (the same from src/ and dist/). */
function packageVersion(): string {
  for (let dir = __dirname; dirname(dir) !== dir; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as { version?: string }).version ?? '1.0.0';
  }
  return '1.0.0';
}

/** Builds the OpenAPI document once, at boot, from the routes Nest registered; serves the same bytes after. */
@Injectable()
export class OpenApiService implements OnApplicationBootstrap {
  private json?: string;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onApplicationBootstrap(): void {
    const routes = documentRoutes(discoverRoutes(this.discovery, this.scanner, this.reflector));
    this.json = JSON.stringify(buildOpenApiDocument(routes, { version: packageVersion() }));
  }

  /** The document as JSON text. */
  get document(): string {
    if (this.json === undefined) throw new Error('the OpenAPI document is built at application bootstrap');
    return this.json;
  }
}

import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { documentRoutes } from './documented-route';
import { buildOpenApiDocument } from './openapi-document';
import { discoverRoutes } from './route-discovery';

/** The version of the HTTP contract this document describes (paths live under /v1). */
const CONTRACT_VERSION = '1.0.0';

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
    this.json = JSON.stringify(buildOpenApiDocument(routes, { version: CONTRACT_VERSION }));
  }

  /** The document as JSON text. */
  get document(): string {
    if (this.json === undefined) throw new Error('the OpenAPI document is built at application bootstrap');
    return this.json;
  }
}

export interface ApiResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  key?: string;
  headers?: Record<string, string>;
  /** Raw body (sent as is); `json` is serialised with Content-Type: application/json. */
  raw?: string;
  json?: unknown;
  contentType?: string;
}

/** A tiny client for the gateway: real HTTP over loopback, no mocks. */
export class Api {
  constructor(readonly baseUrl: string) {}

  async request<T = Record<string, unknown>>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key) headers['authorization'] = `Bearer ${options.key}`;
    let body: string | undefined;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] = options.contentType ?? 'application/json';
    } else if (options.raw !== undefined) {
      body = options.raw;
      if (options.contentType) headers['content-type'] = options.contentType;
    }
    const res = await fetch(this.baseUrl + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  }

  post<T = Record<string, unknown>>(path: string, json: unknown, options: Omit<RequestOptions, 'json'> = {}) {
    return this.request<T>('POST', path, { ...options, json });
  }

  get<T = Record<string, unknown>>(path: string, options: RequestOptions = {}) {
    return this.request<T>('GET', path, options);
  }

  /** Registers a fresh account; returns its key and id. */
  async register(credits?: number): Promise<{ email: string; key: string; accountId: string }> {
    const email = `u${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}@example.com`;
    const res = await this.post<{ api_key: string; account: { id: string }; credits_remaining: number }>(
      '/v1/auth/register',
      {
        email,
        password: 'correct horse battery',
      },
    );
    if (res.status !== 201) throw new Error(`register failed: ${res.status} ${res.text}`);
    if (credits !== undefined && credits !== res.body.credits_remaining) {
      throw new Error(`expected a signup grant of ${credits}, got ${res.body.credits_remaining}`);
    }
    return { email, key: res.body.api_key, accountId: res.body.account.id };
  }

  /** Registers a webhook for `key`'s account (all events unless `events`); returns its id. */
  async webhook(key: string, url: string, events?: string[]): Promise<string> {
    const res = await this.post<{ webhook: { id: string } }>('/v1/webhooks', { url, events }, { key });
    if (res.status !== 201) throw new Error(`webhook registration failed: ${res.status} ${res.text}`);
    return res.body.webhook.id;
  }
}

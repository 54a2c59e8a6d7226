// The hand-written half of the TypeScript SDK: sending a request with the
// key, retrying it as the API's retry rules say with one Idempotency-Key
// for every attempt of a write, reading pages as async iterables, and
// turning an error answer into a RentapiError. The methods (api.ts) are
// generated from the OpenAPI document.

import { randomBytes } from "node:crypto";

/** This client's version, sent in its User-Agent. */
export const VERSION = "0.1.0";

/** Where `rentapi serve` listens unless told otherwise. */
export const DEFAULT_BASE_URL = "http://127.0.0.1:8080";

/** How a Client is set up. */
export interface ClientOptions {
  /** The service's address; DEFAULT_BASE_URL when not given. */
  baseURL?: string;
  /** SERVICE-Account for every request: the account an unbound live key acts on. */
  account?: string;
  /** Times a request is sent again after a network error, 500, 429 or 503 (default 3). */
  maxRetries?: number;
  /** The first wait after a network error or a 500, in milliseconds (default 1000), doubled each retry up to a minute. */
  backoffMs?: number;
  /** The longest Retry-After waited for, in milliseconds (default 60000); a longer one is returned as the error. */
  maxRetryAfterMs?: number;
  /** Milliseconds before a request is abandoned (default 60000). */
  timeoutMs?: number;
  /** The fetch to use (the global one when not given). */
  fetch?: typeof fetch;
}

/** What one call may change. */
export interface RequestOptions {
  /** The write's Idempotency-Key, instead of one the client makes: keep it with the work it stands for. */
  idempotencyKey?: string;
  /** SERVICE-Account for this call alone. */
  account?: string;
  /** Aborts the call, its retries and their waits. */
  signal?: AbortSignal;
}

/** A query's values as the generated parameter types hold them. */
export type Query = Record<string, string | number | boolean | Date | undefined>;

/** The error body's fields, with the status and the wait the answer asked for. */
export class RentapiError extends Error {
  /** The HTTP status, such as 404. */
  readonly status: number;
  /** The API's stable code, such as resource_not_found: branch on it. */
  readonly code: string;
  /** The field, query parameter or header at fault, when one is. */
  readonly param?: string;
  /** The scope the key lacks, for insufficient_scope. */
  readonly scope?: string;
  /** The object concerned, such as the existing one of a conflict. */
  readonly resourceId?: string;
  /** The request's ID: quote it when asking for help. */
  readonly requestId?: string;
  /** The error page's section on the code. */
  readonly docUrl?: string;
  /** The wait the answer asked for, in milliseconds (429, 503), or undefined. */
  readonly retryAfterMs?: number;

  constructor(status: number, body: unknown, headers: Headers) {
    const e = (body as { error?: Record<string, string> } | undefined)?.error;
    const code = typeof e?.code === "string" ? e.code : "unexpected_response";
    const message = typeof e?.message === "string" ? e.message : `HTTP ${status}`;
    super(`rentapi: ${status} ${code}: ${message}`);
    this.name = "RentapiError";
    this.status = status;
    this.code = code;
    this.param = e?.param;
    this.scope = e?.scope;
    this.resourceId = e?.resource_id;
    this.requestId = e?.request_id ?? headers.get("X-Request-ID") ?? undefined;
    this.docUrl = e?.doc_url;
    const after = Number.parseInt(headers.get("Retry-After") ?? "", 10);
    this.retryAfterMs = Number.isFinite(after) && after >= 0 ? after * 1000 : undefined;
  }

  /** Whether the same request may succeed later. */
  get retryable(): boolean {
    if (this.status === 429 || this.status === 503 || this.status === 500) {
      return this.code !== "monthly_quota_exceeded";
    }
    return this.status === 409 && this.code === "idempotency_in_progress";
  }
}

/** The transport under the generated methods. */
export class BaseClient {
  readonly #key: string;
  readonly #baseURL: string;
  readonly #account?: string;
  readonly #maxRetries: number;
  readonly #backoffMs: number;
  readonly #maxRetryAfterMs: number;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;

  /** A client that calls the API with key (svc_test_… in the sandbox, svc_live_… for real accounts). */
  constructor(key: string, options: ClientOptions = {}) {
    this.#key = key;
    this.#baseURL = (options.baseURL ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
    this.#account = options.account;
    this.#maxRetries = Math.max(options.maxRetries ?? 3, 0);
    this.#backoffMs = options.backoffMs ?? 1000;
    this.#maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
    this.#timeoutMs = options.timeoutMs ?? 60_000;
    this.#fetch = options.fetch ?? fetch;
  }

  /** Sends a request and returns the answer's data, or undefined for a 204. */
  protected async call(method: string, path: string, query: Query | undefined, body: unknown, opts: RequestOptions): Promise<unknown> {
    const answer = await this.#send(method, path, query, body, opts);
    return answer === undefined ? undefined : (answer as { data: unknown }).data;
  }

  /** The items of a list's pages, asking for the next page when the loop reaches it. */
  protected async *list<T>(path: string, query: Query | undefined, opts: RequestOptions): AsyncIterable<T> {
    const q: Query = { ...query };
    for (;;) {
      const page = (await this.#send("GET", path, q, undefined, opts)) as {
        data: T[];
        pagination: { has_more: boolean; next_cursor: string | null };
      };
      yield* page.data;
      if (!page.pagination.has_more || page.pagination.next_cursor === null) {
        return;
      }
      q.cursor = page.pagination.next_cursor;
    }
  }

  async #send(method: string, path: string, query: Query | undefined, body: unknown, opts: RequestOptions): Promise<unknown> {
    const url = new URL(this.#baseURL + path);
    for (const [k, v] of Object.entries(query ?? {})) {
      if (v !== undefined) {
        url.searchParams.set(k, v instanceof Date ? v.toISOString().replace(/\.\d{3}Z$/, "Z") : String(v));
      }
    }
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.#key}`,
      Accept: "application/json",
      "User-Agent": `rentapi-typescript/${VERSION}`,
    };
    let payload: string | undefined;
    if (body !== undefined || method === "POST" || method === "PATCH") {
      payload = JSON.stringify(body ?? {});
      headers["Content-Type"] = "application/json";
    }
    // One key for every attempt: a retry of a write that did land is
    // answered with the first answer, not done again.
    if (method !== "GET") {
      headers["Idempotency-Key"] = opts.idempotencyKey ?? `rentapi-ts-${randomBytes(16).toString("hex")}`;
    }
    const account = opts.account ?? this.#account;
    if (account) {
      headers["SERVICE-Account"] = account;
    }
    for (let attempt = 0; ; attempt++) {
      let status = 0;
      let text = "";
      let resHeaders = new Headers();
      let failure: unknown;
      let wait = 0;
      try {
        const signals = [AbortSignal.timeout(this.#timeoutMs), ...(opts.signal ? [opts.signal] : [])];
        const res = await this.#fetch(url, { method, headers, body: payload, signal: AbortSignal.any(signals) });
        text = await res.text();
        status = res.status;
        resHeaders = res.headers;
      } catch (e) {
        if (opts.signal?.aborted) {
          throw opts.signal.reason;
        }
        failure = e;
        wait = this.#backoff(attempt);
      }
      if (status >= 200 && status < 300) {
        return text === "" ? undefined : JSON.parse(text);
      }
      if (status !== 0) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        const err = new RentapiError(status, parsed, resHeaders);
        if (!err.retryable || (err.retryAfterMs ?? 0) > this.#maxRetryAfterMs) {
          throw err;
        }
        failure = err;
        wait = err.code === "idempotency_in_progress" ? 1000 : err.retryAfterMs || this.#backoff(attempt);
      }
      if (attempt >= this.#maxRetries) {
        throw failure;
      }
      await sleep(wait, opts.signal);
    }
  }

  /** The wait before retry attempt+1: doubled each time up to a minute, jittered over its upper half. */
  #backoff(attempt: number): number {
    const d = Math.min(this.#backoffMs * 2 ** attempt, 60_000);
    return d / 2 + Math.random() * (d / 2);
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", abort);
      resolve();
    }, ms);
    const abort = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", abort, { once: true });
  });
}

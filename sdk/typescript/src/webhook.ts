// Checks that a webhook delivery comes from the service and reads its
// event. X-SERVICE-Signature holds "sha256=<hex>" HMACs of
// "<timestamp>.<body>", one per secret while a rotated secret is still
// honoured; X-SERVICE-Timestamp is the Unix time it was signed at.

import { createHmac, timingSafeEqual } from "node:crypto";
import type { Event } from "./api.js";

/** How far a delivery's timestamp may be from now, in seconds. */
export const TOLERANCE_SECONDS = 300;

/** Why a delivery was refused. */
export type WebhookFailure = "no_signature" | "timestamp_outside_tolerance" | "signature_mismatch";

/** A delivery that does not verify. */
export class WebhookVerificationError extends Error {
  readonly reason: WebhookFailure;
  constructor(reason: WebhookFailure, message: string) {
    super(`webhook: ${message}`);
    this.name = "WebhookVerificationError";
    this.reason = reason;
  }
}

/** A delivery's headers, as Node's IncomingMessage, fetch's Headers or a plain object hold them. */
export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(h: HeaderSource, name: string): string {
  if (h instanceof Headers) {
    return h.get(name) ?? "";
  }
  const key = Object.keys(h).find((k) => k.toLowerCase() === name.toLowerCase());
  const v = key === undefined ? undefined : h[key];
  return Array.isArray(v) ? v.join(",") : (v ?? "");
}

/**
 * Throws a WebhookVerificationError unless the raw body (the bytes as
 * received, before any parsing) carries a signature of secret (whsec_…)
 * made within TOLERANCE_SECONDS of now.
 */
export function verifyWebhook(body: string | Uint8Array, headers: HeaderSource, secret: string, now: Date = new Date()): void {
  const tsText = header(headers, "X-SERVICE-Timestamp").trim();
  if (!/^\d+$/.test(tsText)) {
    throw new WebhookVerificationError("no_signature", `X-SERVICE-Timestamp is ${JSON.stringify(tsText)}`);
  }
  const ts = Number(tsText);
  if (Math.abs(now.getTime() / 1000 - ts) > TOLERANCE_SECONDS) {
    throw new WebhookVerificationError("timestamp_outside_tolerance", `signed at ${ts}, more than ${TOLERANCE_SECONDS} s from now`);
  }
  const want = createHmac("sha256", secret).update(`${tsText}.`).update(body).digest();
  let found = false;
  for (const part of header(headers, "X-SERVICE-Signature").split(",")) {
    const entry = part.trim();
    if (!entry.startsWith("sha256=")) {
      continue;
    }
    found = true;
    const got = Buffer.from(entry.slice("sha256=".length), "hex");
    if (got.length === want.length && timingSafeEqual(got, want)) {
      return;
    }
  }
  if (!found) {
    throw new WebhookVerificationError("no_signature", "X-SERVICE-Signature has no sha256= entry");
  }
  throw new WebhookVerificationError("signature_mismatch", "no signature matches the secret");
}

/** Verifies a delivery (verifyWebhook) and returns its event. */
export function constructEvent(body: string | Uint8Array, headers: HeaderSource, secret: string, now?: Date): Event {
  verifyWebhook(body, headers, secret, now);
  const text = typeof body === "string" ? body : Buffer.from(body).toString("utf8");
  return JSON.parse(text) as Event;
}

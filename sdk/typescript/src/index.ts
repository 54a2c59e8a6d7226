// The TypeScript client of the rental-management API.
export * from "./api.js";
export { RentapiError, VERSION, DEFAULT_BASE_URL, type ClientOptions, type RequestOptions } from "./client.js";
export { verifyWebhook, constructEvent, WebhookVerificationError, TOLERANCE_SECONDS, type WebhookFailure, type HeaderSource } from "./webhook.js";

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { createServer } from "node:http";
import { Client, constructEvent, verifyWebhook, WebhookVerificationError, type Event, type Property } from "@rentapi/sdk";
import { startService, type Service } from "./service.js";

// sign is the spec's signature, written here from its words.
const sign = (secret: string, ts: number, body: string) => "sha256=" + createHmac("sha256", secret).update(`${ts}.${body}`).digest("hex");

test("verifyWebhook", () => {
  const body = `{"id":"evt_1","object":"event","type":"bill.created"}`;
  const now = new Date(1_790_000_000_000);
  const ts = 1_790_000_000;
  const headers = (t: number, sig?: string) => ({ "x-service-timestamp": String(t), ...(sig ? { "X-SERVICE-Signature": sig } : {}) });
  const cases: [string, Record<string, string>, string, string | null][] = [
    ["signed", headers(ts, sign("new", ts, body)), body, null],
    ["rotation", headers(ts, `${sign("old", ts, body)},${sign("new", ts, body)}`), body, null],
    ["4 minutes old", headers(ts - 240, sign("new", ts - 240, body)), body, null],
    ["6 minutes old", headers(ts - 360, sign("new", ts - 360, body)), body, "timestamp_outside_tolerance"],
    ["6 minutes ahead", headers(ts + 360, sign("new", ts + 360, body)), body, "timestamp_outside_tolerance"],
    ["body changed", headers(ts, sign("new", ts, body)), body + " ", "signature_mismatch"],
    ["another secret", headers(ts, sign("old", ts, body)), body, "signature_mismatch"],
    ["not hex", headers(ts, "sha256=zz"), body, "signature_mismatch"],
    ["no signature", headers(ts), body, "no_signature"],
    ["another scheme", headers(ts, "v1=abc"), body, "no_signature"],
    ["no timestamp", { "X-SERVICE-Signature": sign("new", ts, body) }, body, "no_signature"],
  ];
  for (const [name, h, b, want] of cases) {
    if (want === null) {
      assert.doesNotThrow(() => verifyWebhook(b, h, "new", now), name);
    } else {
      assert.throws(() => verifyWebhook(b, h, "new", now), (e: unknown) => e instanceof WebhookVerificationError && e.reason === want, name);
    }
  }
  const fetched = new Headers({ "X-SERVICE-Timestamp": String(ts), "X-SERVICE-Signature": sign("new", ts, body) });
  assert.equal(constructEvent(Buffer.from(body), fetched, "new", now).type, "bill.created");
});

let svc: Service;
before(async () => {
  svc = await startService();
});
after(() => svc?.stop());

test("a real endpoint's deliveries verify, with the old and the new secret after a rotation", async () => {
  const c = new Client(svc.key, { baseURL: svc.baseURL });
  let secrets: string[] = [];
  const events: Event[] = [];
  const refused: unknown[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const ch of req) chunks.push(ch as Buffer);
    try {
      for (const s of secrets) events.push(constructEvent(Buffer.concat(chunks), req.headers, s));
      res.end();
    } catch (e) {
      refused.push(e);
      res.writeHead(400).end();
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
  const ep = await c.createWebhookEndpoint({ url, enabled_events: ["property.created"] });
  const waitFor = async (id: string) => {
    for (let i = 0; i < 1500; i++) {
      assert.deepEqual(refused, []);
      const found = events.filter((e) => (e.data.object as { id: string }).id === id);
      if (found.length === secrets.length) return found;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`no delivery about ${id} in 30 s`);
  };
  try {
    secrets = [ep.secret ?? ""];
    const p = await c.createProperty({ name: `hooked ${Date.now()}`, electricity_rate: 800, water_rate: 1800 });
    const [e] = await waitFor(p.id);
    assert.equal(e?.type, "property.created");
    assert.equal((e?.data.object as unknown as Property).name, p.name);

    const rotated = await c.rotateWebhookSecret(ep.id);
    secrets = [ep.secret ?? "", rotated.secret ?? ""];
    const p2 = await c.createProperty({ name: `hooked again ${Date.now()}`, electricity_rate: 800, water_rate: 1800 });
    await waitFor(p2.id);
  } finally {
    await c.deleteWebhookEndpoint(ep.id);
    server.close();
  }
});

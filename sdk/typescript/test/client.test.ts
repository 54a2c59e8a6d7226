import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client, RentapiError, type Property } from "@rentapi/sdk";
import { startService, type Service } from "./service.js";

let svc: Service;
before(async () => {
  svc = await startService();
});
after(() => svc?.stop());

const client = () => new Client(svc.key, { baseURL: svc.baseURL });
const unique = (name: string) => `${name} ${Date.now()}-${Math.random()}`;

async function propertiesNamed(name: string): Promise<number> {
  let n = 0;
  for await (const p of client().listProperties({ limit: 100 })) {
    if (p.name === name) n++;
  }
  return n;
}

// fault sits between the client and the real service: it passes each
// request on, or answers it itself as a failing network or server would,
// and records the headers the client sent.
type Decide = (n: number, req: IncomingMessage, res: import("node:http").ServerResponse, pass: () => Promise<void>) => Promise<boolean>;

async function fault(decide?: Decide): Promise<{ client: Client; seen: IncomingMessage["headers"][]; close: () => void }> {
  const seen: IncomingMessage["headers"][] = [];
  const target = new URL(svc.baseURL);
  const forward = (req: IncomingMessage, body: Buffer, res?: import("node:http").ServerResponse) =>
    new Promise<void>((done, fail) => {
      const out = httpRequest(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
        (up) => {
          const chunks: Buffer[] = [];
          up.on("data", (c: Buffer) => chunks.push(c));
          up.on("end", () => {
            if (res) {
              res.writeHead(up.statusCode ?? 502, up.headers);
              res.end(Buffer.concat(chunks));
            }
            done();
          });
        },
      );
      out.on("error", fail);
      out.end(body);
    });
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const n = seen.length;
    seen.push(req.headers);
    if (decide && (await decide(n, req, res, () => forward(req, body)))) return;
    await forward(req, body, res);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const addr = server.address() as { port: number };
  return {
    client: new Client(svc.key, { baseURL: `http://127.0.0.1:${addr.port}`, backoffMs: 10 }),
    seen,
    close: () => server.close(),
  };
}

test("the README's month, with the SDK", async () => {
  const run = promisify(execFile);
  const { stdout } = await run(process.execPath, [join(import.meta.dirname, "..", "examples", "month.js")], {
    env: { ...process.env, RENTAPI_KEY: svc.key, RENTAPI_BASE_URL: svc.baseURL },
  });
  assert.equal(
    stdout,
    [
      "rent         Rent                   3500.00",
      "electricity  Electricity             400.00",
      "water        Water                   216.00",
      "charge       Internet                300.00",
      "discount     Long-stay discount     -500.00",
      "total                               3916.00 baht, issued",
      "paid: 3916.00 baht paid, receipt true",
      "",
    ].join("\n"),
  );
});

for (const lose of ["500", "connection"]) {
  test(`a write whose answer is lost (${lose}) is retried with the same Idempotency-Key`, async () => {
    const f = await fault(async (n, _req, res, pass) => {
      if (n > 0) return false;
      await pass(); // the service does the write; its answer is lost
      if (lose === "500") {
        res.writeHead(500, { "Content-Type": "application/json" });
        res.end(`{"error":{"code":"internal_error","message":"lost","request_id":"req_x","doc_url":"x"}}`);
      } else {
        res.socket?.destroy();
      }
      return true;
    });
    try {
      const name = unique("retried");
      const p: Property = await f.client.createProperty({ name, electricity_rate: 800, water_rate: 1800 });
      assert.equal(p.name, name);
      assert.equal(f.seen.length, 2);
      assert.ok(f.seen[0]?.["idempotency-key"]);
      assert.equal(f.seen[0]?.["idempotency-key"], f.seen[1]?.["idempotency-key"]);
      assert.equal(await propertiesNamed(name), 1);
    } finally {
      f.close();
    }
  });
}

test("a caller's key is sent; writes without one get a new key each, reads none", async () => {
  const f = await fault();
  try {
    const name = unique("keyed");
    for (let i = 0; i < 2; i++) {
      await f.client.createProperty({ name, electricity_rate: 800, water_rate: 1800 }, { idempotencyKey: `sdk-ts-${name}` });
    }
    assert.equal(await propertiesNamed(name), 1);
    await f.client.getAccount();
    assert.equal(f.seen[0]?.["idempotency-key"], `sdk-ts-${name}`);
    assert.equal(f.seen[2]?.["idempotency-key"], undefined);
  } finally {
    f.close();
  }
});

for (const status of [429, 503]) {
  test(`${status} is retried after its Retry-After`, async () => {
    const f = await fault(async (n, _req, res) => {
      if (n > 0) return false;
      res.writeHead(status, { "Retry-After": "1", "Content-Type": "application/json" });
      res.end(`{"error":{"code":"rate_limited","message":"slow down","request_id":"req_1","doc_url":"x"}}`);
      return true;
    });
    try {
      const start = Date.now();
      await f.client.getAccount();
      assert.equal(f.seen.length, 2);
      assert.ok(Date.now() - start >= 1000, "the retry came before Retry-After");
    } finally {
      f.close();
    }
  });
}

test("a monthly quota's wait is not waited for; 500s run out", async () => {
  const quota = await fault(async (_n, _req, res) => {
    res.writeHead(429, { "Retry-After": "86400", "Content-Type": "application/json" });
    res.end(`{"error":{"code":"monthly_quota_exceeded","message":"used","request_id":"req_2","doc_url":"x"}}`);
    return true;
  });
  const broken = await fault(async (_n, _req, res) => {
    res.writeHead(500);
    res.end("down");
    return true;
  });
  try {
    await assert.rejects(quota.client.getAccount(), (e: unknown) => e instanceof RentapiError && e.code === "monthly_quota_exceeded" && e.retryAfterMs === 86_400_000);
    assert.equal(quota.seen.length, 1);
    await assert.rejects(broken.client.getAccount(), (e: unknown) => e instanceof RentapiError && e.status === 500 && e.code === "unexpected_response");
    assert.equal(broken.seen.length, 4);
  } finally {
    quota.close();
    broken.close();
  }
});

test("an abort ends the wait for a retry", async () => {
  const f = await fault(async (_n, _req, res) => {
    res.writeHead(503, { "Retry-After": "30" });
    res.end();
    return true;
  });
  try {
    await assert.rejects(f.client.getAccount({ signal: AbortSignal.timeout(200) }), (e: unknown) => (e as Error).name === "TimeoutError");
  } finally {
    f.close();
  }
});

test("errors are RentapiError with the service's fields, not retried", async () => {
  const f = await fault();
  try {
    await assert.rejects(f.client.createProperty({ name: "x", electricity_rate: -1, water_rate: 1800 }), (e: unknown) => {
      assert.ok(e instanceof RentapiError);
      assert.equal(e.status, 400);
      assert.equal(e.code, "invalid_parameter");
      assert.equal(e.param, "electricity_rate");
      assert.match(e.requestId ?? "", /^req_/);
      assert.match(e.docUrl ?? "", /\/docs\/errors#invalid_parameter$/);
      return true;
    });
    assert.equal(f.seen.length, 1);
  } finally {
    f.close();
  }
  await assert.rejects(new Client("svc_test_wrong", { baseURL: svc.baseURL }).getAccount(), (e: unknown) => e instanceof RentapiError && e.code === "invalid_api_key");
});

test("lists follow cursors as the loop goes", async () => {
  const c = client();
  const p = await c.createProperty({ name: unique("paged"), electricity_rate: 800, water_rate: 1800 });
  const want: string[] = [];
  for (const number of ["A1", "A2", "A3", "A4", "A5"]) {
    want.push((await c.createRoom(p.id, { number, monthly_rent: 300000 })).id);
  }
  const f = await fault();
  try {
    const got: string[] = [];
    for await (const r of f.client.listPropertyRooms(p.id, { limit: 2, order: "asc" })) got.push(r.id);
    assert.deepEqual(got, want);
    assert.equal(f.seen.length, 3);
    for await (const r of f.client.listPropertyRooms(p.id, { limit: 2 })) {
      assert.ok(r.id);
      break;
    }
    assert.equal(f.seen.length, 4);
  } finally {
    f.close();
  }
});

test("null clears a property's late fee; a PATCH leaves out what it does not change", async () => {
  const c = client();
  let p = await c.createProperty({
    name: unique("late"),
    electricity_rate: 800,
    water_rate: 1800,
    late_fee: { amount: 5000, per: "day", grace_days: 2, max_amount: 50000 },
  });
  assert.equal(p.late_fee?.max_amount, 50000);
  p = await c.updateProperty(p.id, { name: "renamed " + p.name });
  assert.equal(p.late_fee?.amount, 5000);
  p = await c.updateProperty(p.id, { late_fee: null });
  assert.equal(p.late_fee, null);
});

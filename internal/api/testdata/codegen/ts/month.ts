// The README's month for one room, written against the types that
// openapi-typescript generates from the OpenAPI document (default
// settings, into rentapi.ts beside this file). TestGeneratedClients
// generates them afresh and compiles this with tsc --strict --noEmit: a
// renamed path, operation, parameter or field fails it.
import type { components, paths } from "./rentapi";

type Body<T> = T extends { content: { "application/json": infer B } } ? B : never;
type Query<T> = T extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

type Rooms = paths["/v1/rooms"]["get"];
type CreateReading = paths["/v1/meter-readings"]["post"];
type CreateBill = paths["/v1/bills"]["post"];
type ListBills = paths["/v1/bills"]["get"];
type ListEvents = paths["/v1/events"]["get"];
type CreateLink = paths["/v1/bills/{bill_id}/payment-link"]["post"];
type GetLink = paths["/v1/payment-links/{payment_link_id}"]["get"];
type ListLinks = paths["/v1/payment-links"]["get"];
type Simulate = paths["/v1/test-helpers/payments"]["post"];
type GetBill = paths["/v1/bills/{bill_id}"]["get"];

// A meter's reading with three decimals: a number is a 64-bit float here.
const meterValue: components["schemas"]["MeterPartInput"]["current"] = 98765.432;

export async function month(base: string, key: string): Promise<components["schemas"]["Bill"]> {
  async function call<T>(method: "GET" | "POST", path: string, status: number, body?: unknown): Promise<T> {
    const res = await fetch(base + path, {
      method,
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.status !== status) {
      throw new Error(`${method} ${path}: ${res.status}, want ${status}`);
    }
    return (await res.json()) as T;
  }
  function query<Q extends object>(q: Q): string {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(q)) {
      if (v !== undefined) p.set(k, String(v));
    }
    return "?" + p.toString();
  }

  const roomsQuery: Query<Rooms> = { status: "occupied", limit: 1 };
  const rooms = await call<Body<Rooms["responses"][200]>>("GET", "/v1/rooms" + query(roomsQuery), 200);
  const room = rooms.data[0].id;

  const readingBody: Body<NonNullable<CreateReading["requestBody"]>> = {
    room_id: room,
    month: "2026-12",
    electricity: { current: meterValue },
    water: { current: 412 },
  };
  const reading = await call<Body<CreateReading["responses"][201]>>("POST", "/v1/meter-readings", 201, readingBody);
  if (reading.data.electricity.current !== meterValue) {
    throw new Error(`electricity ${reading.data.electricity.current}`);
  }
  const billBody: Body<NonNullable<CreateBill["requestBody"]>> = { room_id: room, month: "2026-12" };
  const created = await call<Body<CreateBill["responses"][201]>>("POST", "/v1/bills", 201, billBody);
  const eventsQuery: Query<ListEvents> = { limit: 5 };
  const events = await call<Body<ListEvents["responses"][200]>>("GET", "/v1/events" + query(eventsQuery), 200);
  const types: string[] = events.data.map((e) => e.type);

  const billsQuery: Query<ListBills> = { room_id: room, month: "2026-12" };
  const bills = await call<Body<ListBills["responses"][200]>>("GET", "/v1/bills" + query(billsQuery), 200);
  const bill = bills.data[0];
  if (bill.id !== created.data.id || types.length === 0) {
    throw new Error("the December bill was not found");
  }
  const link = await call<Body<CreateLink["responses"][201]>>("POST", `/v1/bills/${bill.id}/payment-link`, 201);
  const again = await call<Body<GetLink["responses"][200]>>("GET", `/v1/payment-links/${link.data.id}`, 200);
  const linksQuery: Query<ListLinks> = { bill_id: bill.id, active: "true" };
  const links = await call<Body<ListLinks["responses"][200]>>("GET", "/v1/payment-links" + query(linksQuery), 200);
  const url: string = again.data.url;
  if (url !== link.data.url || links.data.length !== 1) {
    throw new Error("the link read back differs");
  }

  const part: Body<NonNullable<Simulate["requestBody"]>> = { bill_id: bill.id, outcome: "paid", amount_paid: 100000 };
  await call<Body<Simulate["responses"][200]>>("POST", "/v1/test-helpers/payments", 200, part);
  const rest: Body<NonNullable<Simulate["requestBody"]>> = { bill_id: bill.id, outcome: "paid" };
  const payment = await call<Body<Simulate["responses"][200]>>("POST", "/v1/test-helpers/payments", 200, rest);
  const amountPaid: number = payment.data.amount_paid;
  const paid = await call<Body<GetBill["responses"][200]>>("GET", `/v1/bills/${bill.id}`, 200);
  if (paid.data.status !== "paid" || amountPaid <= 0) {
    throw new Error(`the bill is ${paid.data.status}`);
  }
  return paid.data;
}

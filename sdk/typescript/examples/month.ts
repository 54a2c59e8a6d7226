import { Client } from "@rentapi/sdk";

const client = new Client(process.env.RENTAPI_KEY ?? "", { baseURL: process.env.RENTAPI_BASE_URL });

const property = await client.createProperty({
  name: "Baan Suk Dormitory",
  address: "99 Soi Sukhumvit 71, Bangkok",
  electricity_rate: 800, // satang a kWh
  water_rate: 1800, // satang a cubic metre
  due_day: 5,
});
const room = await client.createRoom(property.id, { number: "101", monthly_rent: 350000 });
await client.moveInTenant(room.id, { name: "Somchai Jaidee", phone: "0812345678" });

// This month in Thailand, the month a reading and a bill are for.
const month = new Date(Date.now() + 7 * 3600_000).toISOString().slice(0, 7);
await client.createMeterReading({
  room_id: room.id,
  month,
  electricity: { previous: 2400.5, current: 2450.5 },
  water: { previous: 400, current: 412 },
});
await client.createCharge(room.id, { description: "Internet", amount: 30000, recurring: true, month });
await client.createCharge(room.id, { type: "discount", description: "Long-stay discount", amount: 50000, month });

let bill = await client.createBill({ room_id: room.id, month });
for (const line of bill.lines) {
  console.log(`${line.type.padEnd(12)} ${line.description.padEnd(20)} ${(line.amount / 100).toFixed(2).padStart(9)}`);
}
console.log(`${"total".padEnd(33)} ${(bill.total / 100).toFixed(2).padStart(9)} baht, ${bill.status}`);

await client.createPaymentLink(bill.id);
await client.simulatePayment({ bill_id: bill.id, outcome: "paid", amount_paid: 100000 }); // 1,000 baht
await client.simulatePayment({ bill_id: bill.id, outcome: "paid" }); // then the rest
bill = await client.getBill(bill.id);
console.log(`${bill.status}: ${(bill.amount_paid / 100).toFixed(2)} baht paid, receipt ${bill.receipt != null}`);

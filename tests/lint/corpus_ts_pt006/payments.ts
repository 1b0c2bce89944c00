// PT006: writes inside ctx.run actions. An action cut off in flight runs again; only a key lets the other
// side do it once. Reads, keyed writes and model calls are not reported.
import * as restate from "@restatedev/restate-sdk";
import axios from "axios";

const API = "https://payments.example.com/v1";

async function charge(order: { id: string; amount: number }): Promise<string> {
  const response = await fetch(`${API}/charges`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(order),
  });
  return ((await response.json()) as { id: string }).id;
}

async function chargeOnce(order: { id: string; amount: number }, key: string): Promise<string> {
  const response = await fetch(`${API}/charges`, {
    method: "POST",
    headers: { "content-type": "application/json", "Idempotency-Key": key },
    body: JSON.stringify(order),
  });
  return ((await response.json()) as { id: string }).id;
}

async function refund(chargeId: string): Promise<void> {
  const headers = new Headers({ "content-type": "application/json" });
  headers.set("Idempotency-Key", `refund-${chargeId}`);
  await fetch(`${API}/refunds`, { method: "POST", headers, body: JSON.stringify({ chargeId }) });
}

const payments = restate.service({
  name: "Payments",
  handlers: {
    pay: async (ctx: restate.Context, order: { id: string; amount: number }) => {
      const charged = await ctx.run("charge", () => charge(order)); // expect: PT006
      const key = ctx.rand.uuidv4();
      const again = await ctx.run("charge once", () => chargeOnce(order, key));
      await ctx.run("refund", () => refund(again));
      await ctx.run("notify", () => axios.post(`${API}/notifications`, { order: order.id })); // expect: PT006
      await ctx.run("notify once", () =>
        axios.post(`${API}/notifications`, { order: order.id }, { headers: { "idempotency-key": key } }),
      );
      await ctx.run("cancel", async () => { // expect: PT006
        await fetch(`${API}/holds/${order.id}`, { method: "DELETE" });
      });
      const status = await ctx.run("status", async () => (await fetch(`${API}/charges/${charged}`)).json());
      const summary = await ctx.run("summary", async () =>
        fetch("https://api.openai.com/v1/chat/completions", { method: "POST", body: JSON.stringify(status) }),
      );
      return { charged, again, summary: summary.ok };
    },
  },
});

restate.serve({ services: [payments], port: 9080 });

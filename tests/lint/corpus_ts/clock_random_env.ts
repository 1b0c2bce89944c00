// Clock, randomness, environment and file reads, journaled: the context's clock and random source, and the reads
// inside ctx.run or at start-up.
import * as restate from "@restatedev/restate-sdk";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";

// Read once at start-up: the same value on every attempt of every invocation.
const region = process.env.REGION ?? "eu";
const prices = JSON.parse(readFileSync("prices.json", "utf8"));

const orders = restate.service({
  name: "Orders",
  handlers: {
    place: async (ctx: restate.Context, order: { item: string }) => {
      const placedAt = await ctx.date.now();
      const id = ctx.rand.uuidv4();
      const discount = ctx.rand.random() < 0.1;
      const stamp = await ctx.run("stamp", () => ({ at: Date.now(), trace: randomUUID() }));
      const key = await ctx.run("key", () => process.env["PAYMENT_KEY"] ?? "");
      if (discount) {
        await ctx.run("discount", () => ({ id, region, key, prices, placedAt, stamp }));
      }
      return { id, item: order.item };
    },
  },
});

restate.serve({ services: [orders], port: 9080 });

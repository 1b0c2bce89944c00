// Clock, randomness, environment and file reads in a handler, outside ctx.run: each differs on a replay,
// and a branch on it can take another path than the journal recorded.
import * as restate from "@restatedev/restate-sdk";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";

const orders = restate.service({
  name: "Orders",
  handlers: {
    place: async (ctx: restate.Context, order: { item: string }) => {
      const placedAt = Date.now(); // expect: PT002
      const today = new Date(); // expect: PT002
      const id = randomUUID(); // expect: PT003
      const discount = Math.random() < 0.1; // expect: PT003
      const region = process.env.REGION ?? "eu"; // expect: PT004
      const key = process.env["PAYMENT_KEY"]; // expect: PT004
      const prices = JSON.parse(readFileSync("prices.json", "utf8")); // expect: PT005
      const terms = await readFile("terms.txt", "utf8"); // expect: PT005
      if (discount && new Date(placedAt).getDay() === today.getDay()) {
        await ctx.run("discount", () => ({ id, region, key, prices, terms }));
      }
      return { id, item: order.item };
    },
  },
});

restate.serve({ services: [orders], port: 9080 });

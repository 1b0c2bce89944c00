// Parallel agents in one handler: three model calls, each a ctx.run step, started together and awaited with
// RestatePromise.all, then a fourth that decides from their answers.
import * as restate from "@restatedev/restate-sdk";
import { RestatePromise } from "@restatedev/restate-sdk";
import { z } from "zod";
import { askModel } from "./llm.ts";

const Claim = z.object({
  treatment: z.string().default("physiotherapy, six sessions"),
  amount: z.number().default(540),
  clinic: z.string().default("Harbour Clinic"),
});

async function assess(ctx: restate.Context, claim: z.infer<typeof Claim>) {
  const facts = JSON.stringify(claim);
  const opinion = (name: string, question: string) =>
    ctx.run(name, () => askModel(`${question}\n\nClaim: ${facts}`), { maxRetryAttempts: 3 });
  const cover = opinion("coverage", "Is this treatment covered? Answer covered or not covered.");
  const price = opinion("price", "Is the amount usual for it? Answer usual or unusual.");
  const risk = opinion("risk", "How likely is fraud? Answer low, medium or high.");
  await RestatePromise.all([cover, price, risk]);
  const { text } = await ctx.run("verdict", async () =>
    askModel(`Decide on ${facts}: coverage ${(await cover).text}, price ${(await price).text}, risk ${(await risk).text}`),
  );
  return text;
}

const claims = restate.service({
  name: "ClaimPanel",
  handlers: { assess: restate.createServiceHandler({ input: restate.serde.schema(Claim) }, assess) },
});

restate.serve({ services: [claims], port: 9080 });

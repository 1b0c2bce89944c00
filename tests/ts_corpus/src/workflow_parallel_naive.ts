// The naive copy of workflow_parallel.ts: its model calls are outside ctx.run, so a replay asks the model again
// (its three opinions, plain promises now, are awaited with Promise.all).
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
  const opinion = (name: string, question: string) => askModel(`${question}\n\nClaim: ${facts}`); // not journaled: paid again on every replay (expect: PT001)
  const cover = opinion("coverage", "Is this treatment covered? Answer covered or not covered.");
  const price = opinion("price", "Is the amount usual for it? Answer usual or unusual.");
  const risk = opinion("risk", "How likely is fraud? Answer low, medium or high.");
  await Promise.all([cover, price, risk]);
  const verdict = `Decide on ${facts}: coverage ${(await cover).text}, price ${(await price).text}, risk ${(await risk).text}`;
  const { text } = await askModel(verdict); // not journaled: paid again on every replay (expect: PT001)
  return text;
}

const claims = restate.service({
  name: "ClaimPanel",
  handlers: { assess: restate.createServiceHandler({ input: restate.serde.schema(Claim) }, assess) },
});

restate.serve({ services: [claims], port: 9080 });

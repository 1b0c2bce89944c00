// Three agents at once, each in its own ctx.run, then a fourth on their answers: all journaled.
import * as restate from "@restatedev/restate-sdk";
import { type Context, RestatePromise } from "@restatedev/restate-sdk";
import llmCall from "./utils/llm";

async function run(ctx: Context, claim: { amount: number; reason: string }) {
  const claimJson = JSON.stringify(claim);
  const eligibility = ctx.run("Eligibility agent", async () =>
    llmCall(`Is this claim eligible for reimbursement?\n\nClaim: ${claimJson}`),
  );
  const fraud = ctx.run("Fraud agent", async () => llmCall(`Is this claim fraudulent?\n\nClaim: ${claimJson}`));
  const cost = ctx.run("Rate comparison agent", async () =>
    llmCall(`Is the cost of this claim reasonable?\n\nClaim: ${claimJson}`),
  );
  await RestatePromise.all([eligibility, cost, fraud]);
  const { text } = await ctx.run("Decision agent", async () =>
    llmCall(
      `Decide about claim ${claimJson}: eligibility ${(await eligibility).text}, ` +
        `cost ${(await cost).text}, fraud ${(await fraud).text}`,
    ),
  );
  return text;
}

const workflowParallel = restate.service({
  name: "ParallelAgentClaimApproval",
  handlers: { run },
});

restate.serve({ services: [workflowParallel], port: 9080 });

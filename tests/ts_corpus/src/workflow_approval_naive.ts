// The naive copy of workflow_approval.ts: its model call is outside ctx.run, so a replay asks the model again.
import * as restate from "@restatedev/restate-sdk";
import { z } from "zod";
import { askModel } from "./llm.ts";

const Claim = z.object({ claim: z.string().default("Claim 7731: a cracked windscreen, 380 EUR.") });
const Decision = z.object({ approved: z.boolean(), reviewer: z.string() });

async function run(ctx: restate.WorkflowContext, { claim }: z.infer<typeof Claim>) {
  const { text } = await askModel(`Assess this claim: ${claim}`); // not journaled: paid again on every replay (expect: PT001)
  const decision = await ctx.promise<z.infer<typeof Decision>>("decision");
  return `${decision.approved ? "approved" : "declined"} by ${decision.reviewer}: ${text}`;
}

async function decide(ctx: restate.WorkflowSharedContext, decision: z.infer<typeof Decision>) {
  await ctx.promise<z.infer<typeof Decision>>("decision").resolve(decision);
}

const claims = restate.workflow({
  name: "ClaimApproval",
  handlers: {
    run: restate.createWorkflowHandler({ input: restate.serde.schema(Claim) }, run),
    decide: restate.createWorkflowSharedHandler({ input: restate.serde.schema(Decision) }, decide),
  },
});

restate.serve({ services: [claims], port: 9080 });

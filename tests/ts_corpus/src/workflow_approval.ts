// A claim as a Workflow: the model assesses it in a step, then the run waits on a durable promise that a
// person resolves through the workflow's shared handler (decide), as Restate's TypeScript docs write it.
import * as restate from "@restatedev/restate-sdk";
import { z } from "zod";
import { askModel } from "./llm.ts";

const Claim = z.object({ claim: z.string().default("Claim 7731: a cracked windscreen, 380 EUR.") });
const Decision = z.object({ approved: z.boolean(), reviewer: z.string() });

async function run(ctx: restate.WorkflowContext, { claim }: z.infer<typeof Claim>) {
  const { text } = await ctx.run("assess", () => askModel(`Assess this claim: ${claim}`), { maxRetryAttempts: 3 });
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

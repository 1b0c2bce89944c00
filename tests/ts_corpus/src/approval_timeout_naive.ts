// The naive copy of approval_timeout.ts: its model call is outside ctx.run, so a replay asks the model again.
import * as restate from "@restatedev/restate-sdk";
import { TimeoutError } from "@restatedev/restate-sdk";
import { tool } from "ai";
import { z } from "zod";
import { askModel } from "./llm.ts";

const examplePrompt = "Process my hospital bill of 2024-10-01 for 3000USD for a broken leg at General Hospital.";
const Prompt = z.object({ message: z.string().default(examplePrompt) });

const tools = {
  humanApproval: tool({ description: "Ask for human approval for high-value claims.", inputSchema: z.object({}) }),
};

function requestClaimReview(message: string, approvalId: string): void {
  console.log(`review needed for "${message}": resolve ${approvalId} with true or false`);
}

async function run(ctx: restate.Context, { message }: z.infer<typeof Prompt>) {
  const prompt =
    "You are an insurance claim evaluation agent. Use these rules: " +
    "* if the amount is more than 1000, ask for human approval, " +
    "* if the amount is less than 1000, decide by yourself. " +
    `Evaluate this claim: ${message}`;
  const { text, toolCalls } = await askModel(prompt, tools); // not journaled: paid again on every replay (expect: PT001)
  if (toolCalls[0]?.toolName !== "humanApproval") return text;
  const approval = ctx.awakeable<boolean>();
  await ctx.run("request-review", () => requestClaimReview(message, approval.id));
  try {
    // At most 3 hours, to reach the SLA.
    return await approval.promise.orTimeout({ hours: 3 });
  } catch (e) {
    if (e instanceof TimeoutError) return { approved: false, reason: "Approval timed out - Evaluate with AI" };
    throw e;
  }
}

const agent = restate.service({
  name: "HumanClaimApprovalWithTimeoutsAgent",
  handlers: { run: restate.createServiceHandler({ input: restate.serde.schema(Prompt) }, run) },
});

restate.serve({ services: [agent], port: 9080 });

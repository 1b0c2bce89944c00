// The naive copy of human_approval.ts: its model call is outside ctx.run, so a replay asks the model again.
import * as restate from "@restatedev/restate-sdk";
import { tool } from "ai";
import { z } from "zod";
import { askModel } from "./llm.ts";

const Refund = z.object({ message: z.string().default("Refund order 1142: 2400 EUR, the parcel never came.") });

const tools = {
  askReviewer: tool({ description: "Ask a person to approve a large refund", inputSchema: z.object({}) }),
};

function notifyReviewer(request: string, approvalId: string): void {
  console.log(`review needed for "${request}": resolve ${approvalId} with true or false`);
}

async function decide(ctx: restate.Context, { message }: z.infer<typeof Refund>) {
  const decision = await askModel(`Refunds above 500 EUR need a reviewer. Decide: ${message}`, tools); // not journaled: paid again on every replay (expect: PT001)
  if (decision.toolCalls[0]?.toolName !== "askReviewer") return decision.text;
  const approval = ctx.awakeable<boolean>();
  await ctx.run("notify reviewer", () => notifyReviewer(message, approval.id));
  const approved = await approval.promise;
  return approved ? "refund approved" : "refund declined";
}

const refunds = restate.service({
  name: "RefundDesk",
  handlers: { decide: restate.createServiceHandler({ input: restate.serde.schema(Refund) }, decide) },
});

restate.serve({ services: [refunds], port: 9080 });

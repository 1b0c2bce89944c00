// Human approval, naive: the anthropic client is called through a helper outside ctx.run. The service
// already pauses on a journal mismatch, so the finding does not suggest it.
import * as restate from "@restatedev/restate-sdk";
import Anthropic from "@anthropic-ai/sdk";

const anthropic = new Anthropic();

async function ask(prompt: string): Promise<string> {
  const reply = await anthropic.messages.create({ // expect: PT001
    model: "claude-sonnet-4-5",
    max_tokens: 512,
    messages: [{ role: "user", content: prompt }],
  });
  const first = reply.content[0];
  return first.type === "text" ? first.text : "";
}

async function requestReview(claim: string, awakeableId: string): Promise<void> {
  await fetch("https://reviews.example.com/requests", {
    method: "POST",
    headers: { "content-type": "application/json", "Idempotency-Key": awakeableId },
    body: JSON.stringify({ claim, awakeableId }),
  });
}

const agent = restate.service({
  name: "HumanClaimApprovalAgent",
  handlers: {
    run: async (ctx: restate.Context, claim: string) => {
      const verdict = await ask(`Approve by yourself or ask a human? ${claim}`);
      if (!verdict.includes("human")) return verdict;
      const approval = ctx.awakeable<boolean>();
      await ctx.run("request review", () => requestReview(claim, approval.id));
      return (await approval.promise) ? "approved" : "rejected";
    },
  },
  options: { onJournalMismatchErrors: "pause" },
});

restate.serve({ services: [agent], port: 9080 });

// Multi-agent with Restate's Vercel AI middleware: the model is wrapped with durableCalls(ctx), so every
// call through it is journaled, the sub-agents' too (they get the wrapped model as a parameter).
import * as restate from "@restatedev/restate-sdk";
import { openai } from "@ai-sdk/openai";
import { generateText, type LanguageModel, stepCountIs, tool, wrapLanguageModel } from "ai";
import { durableCalls } from "@restatedev/vercel-ai-middleware";
import { z } from "zod";

const Claim = z.object({ amount: z.number(), reason: z.string() });
type Claim = z.infer<typeof Claim>;

async function runEligibilityAgent(model: LanguageModel, claim: Claim) {
  const { text } = await generateText({
    model,
    system: "Decide whether the claim is eligible for reimbursement.",
    prompt: JSON.stringify(claim),
  });
  return text;
}

async function runFraudAgent(model: LanguageModel, claim: Claim) {
  const { text } = await generateText({
    model,
    system: "Decide whether the claim is fraudulent: low, medium or high risk.",
    prompt: JSON.stringify(claim),
  });
  return text;
}

const run = async (ctx: restate.Context, claim: Claim) => {
  const model = wrapLanguageModel({
    model: openai("gpt-4o-mini"),
    middleware: durableCalls(ctx, { maxRetryAttempts: 3 }),
  });
  const { text } = await generateText({
    model,
    prompt: `Claim: ${JSON.stringify(claim)}`,
    system: "Analyze the claim and use your tools to decide whether to approve it.",
    tools: {
      analyzeEligibility: tool({
        description: "Analyze the claim's eligibility.",
        inputSchema: Claim,
        execute: async (c: Claim) => runEligibilityAgent(model, c),
      }),
      analyzeFraud: tool({
        description: "Analyze the probability of fraud.",
        inputSchema: Claim,
        execute: async (c: Claim) => runFraudAgent(model, c),
      }),
    },
    stopWhen: [stepCountIs(10)],
  });
  return text;
};

const agent = restate.service({
  name: "MultiAgentClaimApproval",
  handlers: { run: restate.createServiceHandler({ input: restate.serde.schema(Claim) }, run) },
});

restate.serve({ services: [agent] });

// Multi-agent, naive: the model is not wrapped with durableCalls, so the orchestrator's calls and the
// sub-agents' (reached through the tools' execute) are all paid again on a replay.
import * as restate from "@restatedev/restate-sdk";
import { openai } from "@ai-sdk/openai";
import { generateText, type LanguageModel, stepCountIs, tool } from "ai";
import { z } from "zod";

const Claim = z.object({ amount: z.number(), reason: z.string() });
type Claim = z.infer<typeof Claim>;

async function runEligibilityAgent(model: LanguageModel, claim: Claim) {
  const { text } = await generateText({ // expect: PT001
    model,
    system: "Decide whether the claim is eligible for reimbursement.",
    prompt: JSON.stringify(claim),
  });
  return text;
}

async function runFraudAgent(model: LanguageModel, claim: Claim) {
  const { text } = await generateText({ // expect: PT001
    model,
    system: "Decide whether the claim is fraudulent: low, medium or high risk.",
    prompt: JSON.stringify(claim),
  });
  return text;
}

const run = async (ctx: restate.Context, claim: Claim) => {
  const model = openai("gpt-4o-mini");
  const { text } = await generateText({ // expect: PT001
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

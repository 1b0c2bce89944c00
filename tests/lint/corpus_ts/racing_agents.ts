// Racing agents: two handlers of the same service answer, the first one wins; each journals its model call.
import * as restate from "@restatedev/restate-sdk";
import { type Context, RestatePromise } from "@restatedev/restate-sdk";
import llmCall from "./utils/llm";

async function run(ctx: Context, { message }: { message: string }): Promise<string> {
  const slow = ctx.serviceClient(racingAgent).thinkLonger({ message });
  const fast = ctx.serviceClient(racingAgent).respondQuickly({ message });
  const winner = await RestatePromise.any([slow.map((r) => ({ tag: "slow", r })), fast.map((r) => ({ tag: "fast", r }))]);
  ctx.cancel(await (winner.tag === "fast" ? slow : fast).invocationId);
  return winner.r ?? "no answer";
}

async function thinkLonger(ctx: Context, { message }: { message: string }): Promise<string> {
  const { text } = await ctx.run("Deep analysis", async () => llmCall(`Analyze thoroughly: ${message}`));
  return text;
}

async function respondQuickly(ctx: Context, { message }: { message: string }): Promise<string> {
  const { text } = await ctx.run("Quick response", async () => llmCall(`Quick answer: ${message}`));
  return text;
}

const racingAgent = restate.service({
  name: "RacingAgent",
  handlers: { run, thinkLonger, respondQuickly },
});

restate.serve({ services: [racingAgent], port: 9080 });

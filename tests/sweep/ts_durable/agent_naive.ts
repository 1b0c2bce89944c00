// The naive twin of agent.ts: the same template without durableCalls, so the model's answers are not
// journaled and a replay asks the model again for every answer it had already given (the tool's step is still
// journaled).
//
// Runs on Node 22.18+ as it is. OPENAI_BASE_URL: the model. Serves on Restate's default port, 9080.
import * as restate from "@restatedev/restate-sdk";
import { openai } from "@ai-sdk/openai";
import { generateText, stepCountIs, tool } from "ai";
import { z } from "zod";

// TOOL
async function getWeather(ctx: restate.Context, city: string) {
  // Do durable steps using the Restate context
  return ctx.run(`get weather ${city}`, () => {
    // Simulate calling the weather API
    return { temperature: 23, description: `Sunny and warm.` };
  });
}

// AGENT
const run = async (ctx: restate.Context, { prompt }: { prompt: string }) => {
  const model = openai("gpt-4o");

  const { text } = await generateText({ // not journaled: paid again on every replay (expect: PT001)
    model,
    system: "You are a helpful agent that provides weather updates.",
    prompt,
    tools: {
      getWeather: tool({
        description: "Get the current weather for a given city.",
        inputSchema: z.object({ city: z.string() }),
        execute: async ({ city }) => getWeather(ctx, city),
      }),
    },
    stopWhen: [stepCountIs(5)],
    providerOptions: { openai: { parallelToolCalls: false } },
  });

  return text;
};

// AGENT SERVICE
const agent = restate.service({
  name: "agent",
  handlers: {
    run: restate.createServiceHandler(
      {
        input: restate.serde.schema(
          z.object({
            prompt: z.string().default("What's the weather in San Francisco?"),
          }),
        ),
      },
      run,
    ),
  },
});

restate.serve({ services: [agent] });

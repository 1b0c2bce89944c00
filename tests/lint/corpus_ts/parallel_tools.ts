// Tools run in parallel, each in its own ctx.run; the model call (the AI SDK's generateText) in one too.
import * as restate from "@restatedev/restate-sdk";
import { type Context, RestatePromise } from "@restatedev/restate-sdk";
import { generateText, type ModelMessage, tool } from "ai";
import { openai } from "@ai-sdk/openai";
import { z } from "zod";
import { fetchWeather, toolResult } from "./utils/weather";

const tools = {
  get_weather: tool({
    description: "Current weather for a location",
    inputSchema: z.object({ city: z.string() }),
  }),
};

async function run(ctx: Context, { message }: { message: string }) {
  const history: ModelMessage[] = [{ role: "user", content: message }];
  while (true) {
    const { text, toolCalls, response } = await ctx.run(
      "LLM call",
      async () => generateText({ model: openai("gpt-4o-mini"), messages: history, tools }),
      { maxRetryAttempts: 3 },
    );
    history.push(...response.messages);
    if (toolCalls.length === 0) return text;
    const pending = toolCalls.map(({ toolCallId, toolName, input }) => ({
      toolCallId,
      toolName,
      promise: ctx.run(`Get weather ${(input as { city: string }).city}`, () =>
        fetchWeather((input as { city: string }).city),
      ),
    }));
    await RestatePromise.all(pending.map(({ promise }) => promise));
    for (const { toolCallId, toolName, promise } of pending) {
      history.push(toolResult(toolCallId, toolName, await promise));
    }
  }
}

const parallelToolsAgent = restate.service({
  name: "ParallelToolAgent",
  handlers: {
    run: restate.createServiceHandler({ input: restate.serde.schema(z.object({ message: z.string() })) }, run),
  },
});

restate.serve({ services: [parallelToolsAgent], port: 9080 });

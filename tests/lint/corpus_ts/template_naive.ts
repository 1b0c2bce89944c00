// The template agent, naive: its model call is made outside ctx.run, so every replay pays for it again.
import * as restate from "@restatedev/restate-sdk";
import { type ModelMessage, tool } from "ai";
import { z } from "zod";
import llmCall from "./utils/llm";
import { fetchWeather, toolResult } from "./utils/weather";

const tools = {
  getWeather: tool({
    description: "Current weather for a city",
    inputSchema: z.object({ city: z.string() }),
  }),
};

async function getWeather(ctx: restate.Context, city: string) {
  return ctx.run(`get weather ${city}`, () => fetchWeather(city));
}

const run = async (ctx: restate.Context, { message }: { message: string }) => {
  const messages: ModelMessage[] = [
    { role: "system", content: "You are a helpful weather assistant." },
    { role: "user", content: message },
  ];
  while (true) {
    const result = await llmCall(messages, tools); // expect: PT001
    messages.push(...result.messages);
    if (result.finishReason !== "tool-calls") return result.text;
    for (const { toolName, toolCallId, input } of result.toolCalls) {
      const output =
        toolName === "getWeather"
          ? await getWeather(ctx, (input as { city: string }).city)
          : `Tool not found: ${toolName}`;
      messages.push(toolResult(toolCallId, toolName, output));
    }
  }
};

const agentService = restate.service({
  name: "agent",
  handlers: {
    run: restate.createServiceHandler({ input: restate.serde.schema(z.object({ message: z.string() })) }, run),
  },
});

restate.serve({ services: [agentService], port: 9080 });

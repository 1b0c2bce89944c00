// Tools defined once at module level, as the AI SDK's docs write them, each side effect in ctx.run: the
// model is wrapped with durableCalls, and the tool's call goes through the context it is given.
import * as restate from "@restatedev/restate-sdk";
import { openai } from "@ai-sdk/openai";
import { generateText, stepCountIs, tool, wrapLanguageModel } from "ai";
import { durableCalls } from "@restatedev/vercel-ai-middleware";
import { z } from "zod";
import { fetchWeather } from "./utils/weather";

const tools = {
  getWeather: tool({
    description: "Current weather for a city",
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }, { experimental_context }) =>
      (experimental_context as restate.Context).run(`weather ${city}`, () => fetchWeather(city)),
  }),
};

const agent = restate.service({
  name: "ToolsAgent",
  handlers: {
    run: async (ctx: restate.Context, prompt: string) => {
      const model = wrapLanguageModel({ model: openai("gpt-4o-mini"), middleware: durableCalls(ctx) });
      const { text } = await generateText({ model, prompt, tools, experimental_context: ctx, stopWhen: [stepCountIs(5)] });
      return text;
    },
  },
});

restate.serve({ services: [agent], port: 9080 });

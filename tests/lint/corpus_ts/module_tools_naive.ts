// Tools defined once at module level, naive: the model's answers are journaled (durableCalls), but the
// tool's fetch runs again on every replay that reaches it.
import * as restate from "@restatedev/restate-sdk";
import { openai } from "@ai-sdk/openai";
import { generateText, stepCountIs, tool, wrapLanguageModel } from "ai";
import { durableCalls } from "@restatedev/vercel-ai-middleware";
import { z } from "zod";

const tools = {
  getWeather: tool({
    description: "Current weather for a city",
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      const response = await fetch(`https://weather.example.com/v1/current?city=${city}`); // expect: PT001
      return response.json();
    },
  }),
};

const agent = restate.service({
  name: "ToolsAgent",
  handlers: {
    run: async (ctx: restate.Context, prompt: string) => {
      const model = wrapLanguageModel({ model: openai("gpt-4o-mini"), middleware: durableCalls(ctx) });
      const { text } = await generateText({ model, prompt, tools, stopWhen: [stepCountIs(5)] });
      return text;
    },
  },
});

restate.serve({ services: [agent], port: 9080 });

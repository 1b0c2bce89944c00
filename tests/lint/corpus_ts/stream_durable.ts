// streamText on a model wrapped with durableCalls, and a provider made with createOpenAI: journaled.
import * as restate from "@restatedev/restate-sdk";
import { createOpenAI } from "@ai-sdk/openai";
import { streamText, wrapLanguageModel } from "ai";
import { durableCalls } from "@restatedev/vercel-ai-middleware";

const provider = createOpenAI({ baseURL: process.env.OPENAI_BASE_URL });

export const writer = restate.service({
  name: "Writer",
  handlers: {
    poem: async (ctx: restate.Context, topic: string) => {
      const model = wrapLanguageModel({ model: provider.chat("gpt-4o-mini"), middleware: [durableCalls(ctx)] });
      const result = streamText({ model, prompt: `A poem about ${topic}` });
      return await result.text;
    },
  },
});

restate.serve({ services: [writer], port: 9080 });

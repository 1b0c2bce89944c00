// streamText, naive: the model is wrapped, but with another middleware than Restate's.
import * as restate from "@restatedev/restate-sdk";
import { createOpenAI } from "@ai-sdk/openai";
import { extractReasoningMiddleware, streamText, wrapLanguageModel } from "ai";

const provider = createOpenAI({ baseURL: process.env.OPENAI_BASE_URL });

export const writer = restate.service({
  name: "Writer",
  handlers: {
    poem: async (ctx: restate.Context, topic: string) => {
      const model = wrapLanguageModel({
        model: provider.chat("gpt-4o-mini"),
        middleware: [extractReasoningMiddleware({ tagName: "think" })],
      });
      const result = streamText({ model, prompt: `A poem about ${topic}` }); // expect: PT001
      return await result.text;
    },
  },
});

restate.serve({ services: [writer], port: 9080 });

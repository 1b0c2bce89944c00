// A chat session as a virtual object, on the openai client: history in state, the model call journaled.
import * as restate from "@restatedev/restate-sdk";
import OpenAI from "openai";

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;

const client = new OpenAI({ maxRetries: 0 });

const chat = restate.object({
  name: "Chat",
  handlers: {
    message: async (ctx: restate.ObjectContext, message: string): Promise<string> => {
      const history = (await ctx.get<Message[]>("history")) ?? [];
      history.push({ role: "user", content: message });
      const answer = await ctx.run("LLM call", async () => {
        const completion = await client.chat.completions.create({ model: "gpt-4o-mini", messages: history });
        return completion.choices[0].message.content ?? "";
      });
      history.push({ role: "assistant", content: answer });
      ctx.set("history", history);
      return answer;
    },
    history: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext) =>
      ctx.get<Message[]>("history"),
    ),
  },
});

restate.serve({ services: [chat], port: 9080 });

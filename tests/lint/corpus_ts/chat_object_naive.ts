// A chat session as a virtual object, naive: the openai client is called in the handler itself.
import * as restate from "@restatedev/restate-sdk";
import OpenAI from "openai";

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;

const client = new OpenAI({ maxRetries: 0 });

const chat = restate.object({
  name: "Chat",
  handlers: {
    async message(ctx: restate.ObjectContext, message: string): Promise<string> {
      const history = (await ctx.get<Message[]>("history")) ?? [];
      history.push({ role: "user", content: message });
      const completion = await client.chat.completions.create({ model: "gpt-4o-mini", messages: history }); // expect: PT001
      const answer = completion.choices[0].message.content ?? "";
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

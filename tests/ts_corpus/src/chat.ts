// A chat session as a Virtual Object: the conversation so far is the object's state; each message appends to
// it, asks the model in a step, and stores the answer.
import * as restate from "@restatedev/restate-sdk";
import type { ModelMessage } from "ai";
import { z } from "zod";
import { askModel } from "./llm.ts";

const Message = z.object({ message: z.string().default("Write a haiku about retries.") });

const chat = restate.object({
  name: "ChatSession",
  handlers: {
    send: restate.createObjectHandler(
      { input: restate.serde.schema(Message) },
      async (ctx: restate.ObjectContext, { message }: z.infer<typeof Message>) => {
        const history = (await ctx.get<ModelMessage[]>("history")) ?? [];
        history.push({ role: "user", content: message });
        const { text } = await ctx.run("model", () => askModel(history), { maxRetryAttempts: 3 });
        history.push({ role: "assistant", content: text });
        ctx.set("history", history);
        return text;
      },
    ),
    history: restate.createObjectSharedHandler(async (ctx: restate.ObjectSharedContext) =>
      (await ctx.get<ModelMessage[]>("history")) ?? [],
    ),
  },
});

restate.serve({ services: [chat], port: 9080 });

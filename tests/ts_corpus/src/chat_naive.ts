// The naive copy of chat.ts: its model call is outside ctx.run, so a replay asks the model again.
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
        const { text } = await askModel(history); // not journaled: paid again on every replay (expect: PT001)
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

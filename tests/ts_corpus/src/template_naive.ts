// The naive copy of template.ts: its model call is outside ctx.run, so a replay asks the model again.
import * as restate from "@restatedev/restate-sdk";
import { tool } from "ai";
import { z } from "zod";
import { askModel, toolMessage } from "./llm.ts";

const Question = z.object({ message: z.string().default("Should I take an umbrella in Lisbon today?") });

const tools = {
  lookUpForecast: tool({
    description: "The forecast for a city today",
    inputSchema: z.object({ city: z.string().describe("The city") }),
  }),
};

async function forecast(ctx: restate.Context, city: string) {
  return ctx.run(`forecast ${city}`, () => ({ city, rain: 0.2, high: 21 }));
}

async function ask(ctx: restate.Context, { message }: z.infer<typeof Question>) {
  const history: Parameters<typeof askModel>[0] = [
    { role: "system", content: "You answer questions about the weather." },
    { role: "user", content: message },
  ];
  for (;;) {
    const reply = await askModel(history, tools); // not journaled: paid again on every replay (expect: PT001)
    history.push(...reply.messages);
    if (reply.finishReason !== "tool-calls") return reply.text;
    for (const call of reply.toolCalls) {
      const { city } = call.input as { city: string };
      history.push(toolMessage(call.toolCallId, call.toolName, await forecast(ctx, city)));
    }
  }
}

const weatherAgent = restate.service({
  name: "WeatherAgent",
  handlers: { ask: restate.createServiceHandler({ input: restate.serde.schema(Question) }, ask) },
});

restate.serve({ services: [weatherAgent], port: 9080 });

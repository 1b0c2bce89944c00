// Parallel tools: the model asks for several tools at once; each runs as a ctx.run step of its own, all
// awaited together with RestatePromise.all, then the model is asked again with every result.
import * as restate from "@restatedev/restate-sdk";
import { RestatePromise } from "@restatedev/restate-sdk";
import { tool, type ModelMessage } from "ai";
import { z } from "zod";
import { askModel, toolMessage } from "./llm.ts";

const Request = z.object({ message: z.string().default("Compare the weather in Oslo, Rome and Quito.") });

const tools = {
  currentWeather: tool({
    description: "The weather in a city right now",
    inputSchema: z.object({ city: z.string() }),
  }),
};

function weatherIn(city: string): string {
  return `${city}: 18 degrees, light wind`;
}

async function compare(ctx: restate.Context, { message }: z.infer<typeof Request>) {
  const history: ModelMessage[] = [{ role: "user", content: message }];
  for (;;) {
    const reply = await ctx.run("model", () => askModel(history, tools), { maxRetryAttempts: 3 });
    history.push(...reply.messages);
    if (reply.toolCalls.length === 0) return reply.text;
    const running = reply.toolCalls.map((call) => ({
      call,
      result: ctx.run(`weather ${(call.input as { city: string }).city}`, () =>
        weatherIn((call.input as { city: string }).city),
      ),
    }));
    await RestatePromise.all(running.map(({ result }) => result));
    for (const { call, result } of running) {
      history.push(toolMessage(call.toolCallId, call.toolName, await result));
    }
  }
}

const parallelTools = restate.service({
  name: "ParallelTools",
  handlers: { compare: restate.createServiceHandler({ input: restate.serde.schema(Request) }, compare) },
});

restate.serve({ services: [parallelTools], port: 9080 });

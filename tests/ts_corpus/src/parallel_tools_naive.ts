// The naive copy of parallel_tools.ts: its model call is outside ctx.run, so a replay asks the model again.
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
    const reply = await askModel(history, tools); // not journaled: paid again on every replay (expect: PT001)
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

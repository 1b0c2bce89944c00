// The deck's agent in TypeScript: ask the model, call the weather tool, pause for a rate limit, ask again.
//
// One handler holds the whole loop, so every replay runs it again from the first line. The tool call and the
// pause go through the context and are journaled. The model call is journaled only when AGENT_MODE=journaled:
// the two forms differ in the one line marked below.
//
// Runs on Node 22.18+ as it is (Node strips the types). Environment:
//   PORT               port to listen on (default 9080)
//   OPENAI_BASE_URL    the model's OpenAI-compatible base URL (read by the openai client)
//   TOOLS_URL          base URL of the tool endpoints (default: OPENAI_BASE_URL with /v1 replaced by /tools)
//   AGENT_MODE         "naive" (default) or "journaled"
//   PAUSE_MS           the durable rate-limit pause (default 5000)
//   SERVICE            the service's name (default "Agent")
//   ON_JOURNAL_MISMATCH  "retry" (the SDK's default), "pause" or "fail": the SDK's experimental
//                      onJournalMismatchErrors, what an attempt that meets a journal mismatch asks the server for
import * as restate from "@restatedev/restate-sdk";
import OpenAI from "openai";

const baseUrl = process.env.OPENAI_BASE_URL ?? "http://127.0.0.1:8000/v1";
const toolsUrl = process.env.TOOLS_URL ?? baseUrl.replace(/\/v1\/?$/, "/tools");
const journaled = process.env.AGENT_MODE === "journaled";
const pauseMs = Number(process.env.PAUSE_MS ?? "5000");
const onMismatch = process.env.ON_JOURNAL_MISMATCH as "retry" | "pause" | "fail" | undefined;

// Retries fail fast here, so the client's own retries would hide from the ledger what was asked and when.
const openai = new OpenAI({ maxRetries: 0 });

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;

const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Current weather for a city.",
      parameters: {
        type: "object",
        properties: { city: { type: "string" } },
        required: ["city"],
      },
    },
  },
];

async function chat(messages: Message[]): Promise<OpenAI.Chat.Completions.ChatCompletionMessage> {
  const completion = await openai.chat.completions.create({ model: "gpt-4o-mini", messages, tools });
  return completion.choices[0].message;
}

async function getWeather(city: string): Promise<unknown> {
  const response = await fetch(`${toolsUrl}/weather?city=${encodeURIComponent(city)}`);
  if (!response.ok) throw new Error(`weather tool answered ${response.status}`);
  return response.json();
}

const agent = restate.service({
  name: process.env.SERVICE ?? "Agent",
  handlers: {
    run: async (ctx: restate.Context, question: string): Promise<string> => {
      const messages: Message[] = [{ role: "user", content: question }];
      for (;;) {
        const reply = journaled
          ? await ctx.run("model", () => chat(messages))
          : await chat(messages); // the one line: a model call outside the journal is paid again on replay
        const calls = reply.tool_calls ?? [];
        if (calls.length === 0) return reply.content ?? "";
        messages.push({ role: "assistant", content: reply.content, tool_calls: calls });
        for (const call of calls) {
          if (call.type !== "function") continue;
          const { city } = JSON.parse(call.function.arguments) as { city: string };
          const weather = await ctx.run("weather", () => getWeather(city));
          messages.push({ role: "tool", tool_call_id: call.id, content: JSON.stringify(weather) });
        }
        await ctx.sleep(pauseMs);
      }
    },
  },
  options: {
    // 20 attempts, then pause, as the deck's Python agent.
    retryPolicy: { initialInterval: 200, exponentiationFactor: 2, maxInterval: 2000, maxAttempts: 20, onMaxAttempts: "pause" },
    ...(onMismatch ? { onJournalMismatchErrors: onMismatch } : {}),
  },
});

restate.serve({ services: [agent], port: Number(process.env.PORT ?? "9080") });
